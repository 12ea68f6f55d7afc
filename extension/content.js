// ISOLATED world, document_start, all frames. Carries messages between this frame's bridge (MAIN world)
// and the service worker, and nothing else: a private MessageChannel to the bridge, handed over once
// before page scripts run, and a runtime port to the worker, opened on first use and reopened after the
// worker restarts. Only our own message types pass, in the direction they belong.
(() => {
  'use strict';
  const FROM_BRIDGE = new Set(['tools', 'result']);
  const FROM_WORKER = new Set(['call', 'cancel', 'sync']);
  const channel = new MessageChannel();
  const bridge = channel.port1;
  let worker = null;

  function toWorker(message) {
    if (!worker) {
      try {
        worker = chrome.runtime.connect({ name: 'webmcp-nb' });
      } catch (_) {
        return; // the extension was reloaded or removed: this frame is orphaned
      }
      worker.onMessage.addListener((m) => FROM_WORKER.has(m?.type) && bridge.postMessage(m));
      worker.onDisconnect.addListener(() => { worker = null; });
    }
    worker.postMessage(message);
  }

  bridge.onmessage = ({ data }) => FROM_BRIDGE.has(data?.type) && toWorker(data);

  // A worker that restarted has lost its mirror; it asks every frame to announce itself again.
  chrome.runtime.onMessage.addListener((message) => {
    if (message?.type === 'sync') bridge.postMessage({ type: 'sync', syncId: message.syncId });
  });

  window.postMessage({ type: 'webmcp-nb:port' }, '*', [channel.port2]);
})();
