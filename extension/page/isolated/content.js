// ISOLATED world, document_start, all frames. Carries messages between this frame's bridge (MAIN world)
// and the service worker, and nothing else: a private MessageChannel to the bridge, handed over once
// before page scripts run, and a runtime port to the worker, opened on first use and reopened after the
// worker restarts. When the worker grants it a lane (lanes.js), calls also come straight from the relay
// on a WebSocket of this frame's own. Only our own message types pass, in the direction they belong.
(() => {
  'use strict';
  const FROM_BRIDGE = new Set(['tools', 'result']);
  const FROM_WORKER = new Set(['call', 'cancel', 'sync', 'lazy']);
  const FROM_LANE = new Set(['call', 'cancel']);
  const channel = new MessageChannel();
  const bridge = channel.port1;
  let worker = null;
  let relayUp = false;
  let lane = null;
  let hidden = false; // between pagehide and a back/forward-cache restore: no lane for this document
  let needReset = true; // the worker's port has not had a full report yet

  // The bridge reports what changed since its previous report. A port to the worker starts from nothing, so
  // on each new one the bridge is asked for a full report (`reset`); a change meant for an earlier port is not
  // sent but asked for again, and comes back whole: the worker's copy of this frame's tools never misses a step.
  function forward(data) {
    if (data.type !== 'tools') return toWorker(data);
    if (data.reset === true) needReset = false;
    else if (needReset) return bridge.postMessage({ type: 'sync', syncId: data.syncId });
    toWorker(data);
  }

  function dropPort() {
    worker = null;
    needReset = true;
    bridge.postMessage({ type: 'reset' });
  }

  // If the worker dies while it is connected to the relay (stopped, crashed), reconnecting restarts it
  // at once; it then rebuilds its mirror by asking every frame to announce itself.
  function openPort() {
    try {
      worker = chrome.runtime.connect({ name: 'webmcp-nb' });
    } catch (_) {
      worker = null; // the extension was reloaded or removed: this frame is orphaned
      return;
    }
    worker.onMessage.addListener((m) => {
      if (m?.type === 'relay') relayUp = m.connected === true;
      else if (m?.type === 'lane') openLane(m);
      else if (FROM_WORKER.has(m?.type)) bridge.postMessage(m);
    });
    const port = worker;
    worker.onDisconnect.addListener(() => {
      if (worker === port) dropPort();
      if (relayUp) setTimeout(() => worker || openPort(), 200);
      relayUp = false;
    });
  }

  function toWorker(message) {
    if (!worker) openPort();
    try {
      worker?.postMessage(message);
    } catch (_) { // the port closed and its disconnect event has not arrived yet
      dropPort();
      if (message.type === 'tools') bridge.postMessage({ type: 'sync', syncId: message.syncId });
    }
  }

  // The lane: calls come in as JSON (one, or an array); a result goes out as a header line followed by the
  // tool's JSON text as the bridge made it, so it is not encoded a second time. Lane calls have string ids,
  // the worker's are numbers. The handshake offers a proof of the worker's one-time key (never the key), and
  // the relay's first message must carry the proof the worker expects: until then no call is run, so a
  // program squatting the relay's port cannot drive this frame.
  function openLane({ url, protocol, expect }) {
    if (lane) return lane.readyState === WebSocket.OPEN && toWorker({ type: 'lane', open: true });
    if (hidden || typeof url !== 'string' || typeof protocol !== 'string' || typeof expect !== 'string') return;
    let ws;
    try {
      ws = new WebSocket(url, [protocol]);
    } catch (_) {
      return toWorker({ type: 'lane', open: false, opened: false });
    }
    let opened = false;
    let trusted = false;
    lane = ws;
    ws.onopen = () => {
      opened = true;
    };
    ws.onmessage = ({ data }) => {
      let messages;
      try {
        messages = [].concat(JSON.parse(data));
      } catch (_) {
        return;
      }
      if (!trusted) {
        trusted = messages[0]?.type === 'ok' && messages[0].proof === expect;
        if (!trusted) return ws.close();
        toWorker({ type: 'lane', open: true });
        messages = messages.slice(1);
      }
      bridge.postMessage(messages.filter((m) => FROM_LANE.has(m?.type) && typeof m?.id === 'string'));
    };
    ws.onclose = () => {
      if (lane === ws) lane = null;
      toWorker({ type: 'lane', open: false, opened: opened && trusted });
    };
  }

  // The bridge sends arrays: lane results become one frame of records, each a JSON header line with the
  // text's length (`n`, in UTF-16 code units) followed by the text; `toolsChanged` when the bridge says the frame's
  // tools changed during the call.
  bridge.onmessage = ({ data }) => {
    let frame = '';
    for (const message of Array.isArray(data) ? data : []) {
      if (message?.type === 'result' && typeof message.id === 'string') {
        const { id, ok, error } = message;
        const text = ok ? String(message.text) : '';
        const header = ok ? { id, ok, n: text.length, ...(message.toolsChanged === true ? { toolsChanged: true } : {}) }
          : { id, ok, error, n: 0 };
        frame += JSON.stringify(header) + '\n' + text;
      } else if (FROM_BRIDGE.has(message?.type)) forward(message);
    }
    if (frame && lane?.readyState === WebSocket.OPEN) lane.send(frame);
  };

  // A lane belongs to one document: close it as the document is hidden (unloading, or entering the
  // back/forward cache, which a page with an open WebSocket could not), so no call meant for the next one
  // reaches this one.
  window.addEventListener('pagehide', () => {
    hidden = true;
    if (!lane) return;
    const ws = lane;
    lane = null;
    ws.close();
  });

  // A page restored from the back/forward cache holds a port the worker closed while it was frozen, and
  // posting on it fails silently: drop it, and announce the tools on a fresh one.
  window.addEventListener('pageshow', (event) => {
    if (!event.persisted) return;
    hidden = false;
    worker?.disconnect();
    dropPort();
    bridge.postMessage({ type: 'sync' });
  });

  // A worker that restarted has lost its mirror; it asks every frame to announce itself again. The
  // answer comes on the port; replying here tells the worker someone is listening (no reply = no bridge).
  chrome.runtime.onMessage.addListener((message, _sender, sendResponse) => {
    if (message?.type === 'sync') {
      bridge.postMessage({ type: 'sync', syncId: message.syncId });
      sendResponse(true);
    } else if (message?.type === 'back' && window === window.top) {
      // The page's own history.back(): chrome.tabs.goBack skips entries made without a user gesture.
      const possible = window.navigation?.canGoBack ?? history.length > 1;
      if (possible) history.back();
      sendResponse(possible);
    }
  });

  window.postMessage({ type: 'webmcp-nb:port' }, '*', [channel.port2]);
})();
