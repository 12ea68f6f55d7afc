// Lanes: a frame's own WebSocket to the relay (webmcp_nb/lanes.py), so a tool call skips this worker and
// its two extra hops. A page endpoint with tools gets one while the relay is connected, if the policy
// allows the frame's URL ('loopback' by default: Chrome's Local Network Access lets a loopback page reach
// 127.0.0.1 without asking; 'all' is for launched browsers started with that check off). The worker tells
// the relay a fresh key over its own authenticated socket, and hands the frame's content script, over the
// frame's port, a proof of that key for its handshake and the proof the relay must answer with (auth.js);
// page scripts can read neither, and the key itself never crosses the lane. A lane that never opened is
// offered to that frame again only after the worker reconnects to the relay.
import { Method } from '../shared/protocol.js';
import { isConnected, notify, relaySettings } from './relay.js';
import { laneCredentials } from './auth.js';

const LOOPBACK = /^(localhost|.+\.localhost|127(\.\d{1,3}){3}|\[::1\])$/;

function allowed(policy, url) {
  let parsed;
  try {
    parsed = new URL(url);
  } catch (_) {
    return false;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return false;
  return policy === 'all' || (policy === 'loopback' && LOOPBACK.test(parsed.hostname));
}

export async function offerLane(endpoint, tabId) {
  const settings = relaySettings();
  if (endpoint.lane || !isConnected() || !settings || endpoint.tools.size === 0) return;
  if (!allowed(settings.lanes, endpoint.url)) return;
  endpoint.lane = 'offered';
  const { key, protocol, expect } = await laneCredentials();
  if (!isConnected()) {
    endpoint.lane = null;
    return;
  }
  notify(Method.LANE_GRANT, { key, tabId, frameId: endpoint.frameId, documentId: endpoint.documentId });
  try {
    endpoint.port.postMessage({ type: 'lane', url: settings.relayUrl.replace(/\/browser$/, '/lane'), protocol, expect });
  } catch (_) {
    endpoint.lane = null; // the frame went while the credentials were made (its grant expires unused)
  }
}

// The relay is (back) in touch: offer lanes again, also to frames whose lane could not open while it was away.
export function reofferLane(endpoint, tabId) {
  if (endpoint.lane === 'refused' || endpoint.lane === 'offered') endpoint.lane = null;
  offerLane(endpoint, tabId);
}

// The content script's word on its lane: open, or closed (after it had opened: offer a new one when the
// relay is back; never opened: this frame cannot have one).
export function laneReport(endpoint, tabId, { open, opened }) {
  if (open) endpoint.lane = 'open';
  else if (opened) {
    endpoint.lane = null;
    offerLane(endpoint, tabId);
  } else endpoint.lane = 'refused';
}
