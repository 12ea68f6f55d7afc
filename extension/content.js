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
  let relayUp = false;

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
      else if (FROM_WORKER.has(m?.type)) bridge.postMessage(m);
    });
    worker.onDisconnect.addListener(() => {
      worker = null;
      if (relayUp) setTimeout(() => worker || openPort(), 200);
      relayUp = false;
    });
  }

  function toWorker(message) {
    if (!worker) openPort();
    worker?.postMessage(message);
  }

  bridge.onmessage = ({ data }) => FROM_BRIDGE.has(data?.type) && toWorker(data);

  // A page restored from the back/forward cache holds a port the worker closed while it was frozen, and
  // posting on it fails silently: drop it, and announce the tools on a fresh one.
  window.addEventListener('pageshow', (event) => {
    if (!event.persisted) return;
    worker?.disconnect();
    worker = null;
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
