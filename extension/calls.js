// Tool calls: route each to the endpoint (frame bridge or skill runtime) that has the tool, with a per-call
// timeout. On expiry the endpoint is told to cancel (it aborts the call's AbortSignal); if the endpoint's
// port closes mid-call (navigation, closed tab) the call fails with NAVIGATED. A tool the mirror left out
// (its frame is over the mirror's bounds) is still called by name: each frame that left tools out is asked.
import { ErrorCode } from './protocol.js';
import { RelayError } from './relay.js';
import { findTool, tabs } from './mirror.js';

const calls = new Map(); // call id → {port, finish(message)}
let nextId = 1;

export async function callTool({ tabId, name, frameId, args, timeoutMs = 30_000, maxResultChars = 4_000_000 }) {
  if (!tabs.has(tabId)) throw new RelayError(ErrorCode.TAB_NOT_FOUND, `No tab with id ${tabId}`);
  const found = findTool(tabId, name, frameId);
  const notFound = () => new RelayError(ErrorCode.TOOL_NOT_FOUND, `Tab ${tabId} has no tool named "${name}"`);
  if (!found) throw notFound();
  if (found.endpoint) return run(found.endpoint, name, args, timeoutMs, maxResultChars);
  for (const endpoint of found.unlisted) {
    try {
      return await run(endpoint, name, args, timeoutMs, maxResultChars);
    } catch (error) {
      if (error?.code !== ErrorCode.TOOL_NOT_FOUND) throw error;
    }
  }
  throw notFound();
}

function run(endpoint, name, args, timeoutMs, maxResultChars) {
  const { port, frameId } = endpoint;
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      port.postMessage({ type: 'cancel', id });
      finish({ ok: false, error: { code: ErrorCode.TIMEOUT, message: `"${name}" did not finish within ${timeoutMs} ms` } });
    }, timeoutMs);
    function finish(message) {
      clearTimeout(timer);
      calls.delete(id);
      if (message.ok) resolve({ text: message.text, frameId });
      else reject(new RelayError(message.error?.code ?? ErrorCode.TOOL_ERROR, message.error?.message ?? 'Tool failed', message.error?.data));
    }
    calls.set(id, { port, finish });
    port.postMessage({ type: 'call', id, name, input: args ?? {}, maxChars: maxResultChars });
  });
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
