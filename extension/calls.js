// Tool calls: route each to the endpoint (frame bridge or skill runtime) that has the tool, with a per-call
// timeout. On expiry the endpoint is told to cancel (it aborts the call's AbortSignal); if the endpoint's
// port closes mid-call (navigation, closed tab) the call fails with NAVIGATED.
import { ErrorCode } from './protocol.js';
import { RelayError } from './relay.js';
import { tabs, toolsOf } from './mirror.js';

const calls = new Map(); // call id → {port, finish(message)}
let nextId = 1;

export function callTool({ tabId, name, frameId, args, timeoutMs = 30_000, maxResultChars = 4_000_000 }) {
  if (!tabs.has(tabId)) throw new RelayError(ErrorCode.TAB_NOT_FOUND, `No tab with id ${tabId}`);
  const entry = toolsOf(tabId).find(({ tool }) => tool.name === name && (frameId === undefined || tool.frameId === frameId));
  if (!entry) throw new RelayError(ErrorCode.TOOL_NOT_FOUND, `Tab ${tabId} has no tool named "${name}"`);
  const { port } = entry.endpoint;
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      port.postMessage({ type: 'cancel', id });
      finish({ ok: false, error: { code: ErrorCode.TIMEOUT, message: `"${name}" did not finish within ${timeoutMs} ms` } });
    }, timeoutMs);
    function finish(message) {
      clearTimeout(timer);
      calls.delete(id);
      if (message.ok) resolve({ text: message.text, frameId: entry.tool.frameId });
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
