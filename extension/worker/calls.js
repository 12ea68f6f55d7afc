// Tool calls: route each to the endpoint (frame bridge or skill runtime) that has the tool, with a per-call
// timeout. On expiry the endpoint is told to cancel (it aborts the call's AbortSignal); if the endpoint's
// port closes mid-call (navigation, closed tab) the call fails with NAVIGATED. A tool the mirror left out
// (its frame is over the mirror's bounds) is still called by name: each frame that left tools out is asked.
// A caller that gives up (an MCP client cancelling, an agent stopped) makes the relay send `tool.cancel` with the
// call's `callId`: the endpoint aborts it as on expiry.
import { ErrorCode } from '../shared/protocol.js';
import { RelayError } from './relay.js';
import { findTool, tabs } from './mirror.js';

const calls = new Map(); // call id → {port, finish(message), cancel()}
const byCallId = new Map(); // the relay's callId → call id
let nextId = 1;

export async function callTool({ tabId, name, frameId, documentId, args, timeoutMs = 30_000, maxResultChars = 4_000_000, callId }) {
  if (!tabs.has(tabId)) throw new RelayError(ErrorCode.TAB_NOT_FOUND, `No tab with id ${tabId}`);
  const found = findTool(tabId, name, frameId, documentId);
  const notFound = () => new RelayError(ErrorCode.TOOL_NOT_FOUND, `Tab ${tabId} has no tool named "${name}"`);
  if (!found) throw notFound();
  if (found.stale) {
    throw new RelayError(ErrorCode.STALE_TOOL, `Tab ${tabId} no longer shows the document that registered "${name}": the page changed since you listed it.`);
  }
  if (found.endpoint) return run(found.endpoint, name, args, timeoutMs, maxResultChars, callId);
  for (const endpoint of found.unlisted) {
    try {
      return await run(endpoint, name, args, timeoutMs, maxResultChars, callId);
    } catch (error) {
      if (error?.code !== ErrorCode.TOOL_NOT_FOUND) throw error;
    }
  }
  throw notFound();
}

function run(endpoint, name, args, timeoutMs, maxResultChars, callId) {
  const { port, frameId } = endpoint;
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const stop = (message) => {
      port.postMessage({ type: 'cancel', id });
      finish({ ok: false, error: { code: ErrorCode.TIMEOUT, message } });
    };
    const timer = setTimeout(() => stop(`"${name}" did not finish in ${timeLimit(timeoutMs)}.`), timeoutMs);
    function finish(message) {
      clearTimeout(timer);
      calls.delete(id);
      if (callId !== undefined) byCallId.delete(callId);
      if (message.ok) resolve({ text: message.text, frameId, ...(message.toolsChanged === true ? { toolsChanged: true } : {}) });
      else reject(new RelayError(message.error?.code ?? ErrorCode.TOOL_ERROR, message.error?.message ?? 'Tool failed', message.error?.data));
    }
    calls.set(id, { port, finish, cancel: () => stop(`"${name}" was cancelled by its caller`) });
    if (callId !== undefined) byCallId.set(callId, id);
    port.postMessage({ type: 'call', id, name, input: args ?? {}, maxChars: maxResultChars });
  });
}

// A call's time limit in words, as the relay's lanes word it (webmcp_nb/link/lanes.py: time_limit): "under 1 ms"
// for a limit the wire's whole milliseconds made 0, "200 ms", "1.5 s".
function timeLimit(ms) {
  if (ms < 1) return 'under 1 ms';
  return ms < 1000 ? `${ms} ms` : `${+(ms / 1000).toPrecision(6)} s`;
}

// `tool.cancel` from the relay: the caller gave up on the call with this callId.
export function cancelCall({ callId }) {
  calls.get(byCallId.get(callId))?.cancel();
}

export function handleResult(port, message) {
  const call = calls.get(message.id);
  if (call?.port === port) call.finish(message);
}

export function failCallsOf(port) {
  for (const call of calls.values()) {
    if (call.port === port) {
      call.finish({ ok: false, error: { code: ErrorCode.NAVIGATED, message: 'The page navigated away or closed during the call' } });
    }
  }
}
