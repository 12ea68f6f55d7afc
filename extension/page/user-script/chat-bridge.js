// USER_SCRIPT world (its own, `webmcp-nb-bridge`), injected by worker/chat-bridge.js when a notebook opens the
// chat-site bridge in this tab (webmcp_nb/bridge). The page side of the bridge, and nothing more:
// - it reads the chat through the site adapter's selectors (data: webmcp_nb/bridge/chat_sites/*.json) and tells
//   the notebook the visible text of the assistant's latest reply (visible-text.js) as it streams and once it is
//   complete; the notebook finds the calls in it (the agent's parser), runs them and decides everything;
// - it adds the notebook's tool instructions to what the user sends, and types results back as a person does
//   (input events, line breaks that do not send), sending them once the site has finished answering when the user
//   chose auto-send, else leaving them for the user's own Send;
// - its bar lives in a closed shadow root whose host the page cannot restyle (`:host { all: initial !important }`
//   wins over any style of the page's): the bridged tools (by origin, never a URL), what the bridge does, and
//   which call waits for the user's answer — never its arguments, and never a way to give that answer, which only
//   the side panel and the notebook panel take (the page can draw over, or click, anything of its own DOM). Its one
//   control, the on/off switch, counts only the user's own click on it while it is visible and uncovered
//   (IntersectionObserver v2), and has been for a moment.
// - it says when, after a message is sent, the page changes but nothing matches the adapter's `assistant`.
// A reply is known by the turn it answers (how many messages were sent since the bridge started) and by its
// text, never by its element: sites re-render finished replies. Page text is shown only as textContent.
(() => {
  'use strict';
  const PORT = 'webmcp-nb-bridge';
  const MAX_REPLY_CHARS = 200_000;
  const READ_MS = 120; // the page is read at most this often while it changes, and every POLL_MS anyway
  const POLL_MS = 300;
  const QUIET_MS = 700; // a reply is complete when the site is not busy and its text stayed the same this long
  const SEND_WAIT_MS = 5_000;
  const SEEN_MS = 500; // the switch counts a click once it has been visible and uncovered this long
  const ASSISTANT_WAIT_MS = 4_000; // after a send: the page changed, and nothing new matches `assistant` this long
  const WAITING = 'waits for your answer in the side panel or the notebook panel';
  const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

  let current = null;
  globalThis.__webmcpNbChatBridge = (config, origin) => {
    if (origin !== null && location.origin !== origin) return { elsewhere: location.origin }; // not the chat site
    current?.stop();
    current = start(config);
    return current.check();
  };

  const visible = (text) => String(text ?? '').replace(BIDI, (c) => `<U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}>`);
  const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

  function el(tag, attributes = {}, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes)) {
      if (name === 'text') node.textContent = visible(value);
      else node.setAttribute(name, value);
    }
    for (const child of children) if (child !== null) node.append(typeof child === 'string' ? visible(child) : child);
    return node;
  }

  const STYLE = `
    :host { all: initial !important; display: block !important; position: fixed !important; top: 12px !important;
      right: 12px !important; z-index: 2147483647 !important; }
    .box { font: 12px/1.4 system-ui, sans-serif; color: #1f2328; width: 300px; display: flex; flex-direction: column; gap: 6px; }
    .bar { background: #fff; border: 1px solid #d0d7de; border-radius: 8px; padding: 6px 8px; box-shadow: 0 2px 8px #0002; }
    .row { display: flex; align-items: center; gap: 6px; flex-wrap: wrap; }
    .logo { font-weight: 700; }
    .status { color: #57606a; overflow-wrap: anywhere; }
    button { font: inherit; border: 1px solid #d0d7de; border-radius: 6px; background: #f6f8fa; padding: 2px 8px; cursor: pointer; }
    button.on { background: #dafbe1; border-color: #1a7f37; }
    details ul { margin: 4px 0 0; padding-left: 16px; max-height: 160px; overflow: auto; }
    .waiting { background: #fff8c5; border: 1px solid #d4a72c; border-radius: 8px; padding: 6px 8px; box-shadow: 0 2px 8px #0002; }
    .waiting.done { background: #fff; border-color: #d0d7de; }
    .muted { color: #57606a; }
  `;

  function start(config) {
    const session = crypto.randomUUID();
    let { site, tools, suffix, key, autoSend, enabled } = config;
    let stopped = false;
    let turn = 0; // messages sent since the bridge started
    let baseline = 0; // assistant messages on the page when the last message was sent: only later ones are replies
    let last = { text: null, at: 0, done: true };
    let instructed = null; // the instructions (key and path) the conversation got last
    let readTimer = null;
    let sending = false;
    // Since the last send: when it was, whether the page changed (outside the input and this bar), whether a reply
    // appeared, and whether the bridge said it could not find one.
    let sent = { at: 0, changed: false, seen: true, missing: false };
    const results = []; // {turn, text}, typed once this turn's reply is complete and the site is idle
    let typed = null; // the first line of results typed into the input for the user to send
    const waiting = new Map(); // a call waiting for the user's answer: id → its note in the bar

    // ----- the site, through its adapter -----

    const candidates = (name) => [site[name]].flat().filter((s) => typeof s === 'string');
    function query(name) {
      for (const selector of candidates(name)) {
        let nodes;
        try {
          nodes = [...document.querySelectorAll(selector)];
        } catch (_) {
          continue; // an invalid selector: check() says so
        }
        if (nodes.length) return { selector, nodes };
      }
      return { selector: null, nodes: [] };
    }
    const shown = (node) => node.getClientRects().length > 0;
    function find(name) {
      const { nodes } = query(name);
      return nodes.filter(shown).at(-1) ?? nodes.at(-1) ?? null;
    }
    const replies = () => query('assistant').nodes;
    const busy = () => query('busy').nodes.some(shown);
    const isField = (node) => node instanceof HTMLTextAreaElement || node instanceof HTMLInputElement;
    const textOf = (node) => (isField(node) ? node.value : node.innerText ?? '');
    const disabled = (node) => node.disabled || node.getAttribute('aria-disabled') === 'true' || !!node.closest('[aria-disabled="true"], [disabled]');

    function check() {
      const found = {};
      for (const name of ['input', 'send', 'assistant', 'busy']) {
        const invalid = candidates(name).filter((s) => {
          try {
            document.querySelector(s);
            return false;
          } catch (_) {
            return true;
          }
        });
        const { selector, nodes } = query(name);
        found[name] = { tried: candidates(name), selector, found: nodes.length, invalid };
      }
      found.assistant.missing = sent.missing; // the page changed after the last send, and nothing new matched
      const input = find('input');
      found.inputType = input ? (isField(input) ? 'textarea' : 'contenteditable') : null;
      return found;
    }

    // ----- the notebook -----

    let port = null;
    function connect() {
      port = chrome.runtime.connect({ name: `${PORT}/${config.portKey}` }); // the key proves this is the world it started
      port.onMessage.addListener(onMessage);
      port.onDisconnect.addListener(() => {
        port = null;
        if (stopped) return; // closed by the notebook, or replaced by a new bridge: it said so first
        stop();
        wake();
      });
    }
    // The port went without a word: Chrome stopped the extension's worker, as it may whenever it likes. A new
    // connection starts it again at once (it refuses this one, whose key it no longer knows); started, it dials the
    // relay, and the notebook starts the bridge afresh. Without it, the worker slept until its next alarm (30 s),
    // unless some other frame of the browser happened to talk to it.
    function wake() {
      try {
        chrome.runtime.connect({ name: `${PORT}/wake` });
      } catch (_) { /* the extension was reloaded or removed: nothing to wake */ }
    }
    const post = (message) => port?.postMessage({ session, ...message });

    function onMessage(message) {
      const handler = {
        config: () => {
          ({ site, tools, suffix, key, autoSend, enabled } = message);
          render();
        },
        waiting: () => showWaiting(message),
        resolve: () => resolveWaiting(message),
        status: () => { status.textContent = visible(message.text); },
        result: () => {
          if (message.session === session) results.push({ turn: message.turn, text: String(message.text) });
          read();
        },
        check: () => post({ type: 'checked', id: message.id, check: check() }),
        say: () => say(String(message.text)),
        close: () => stop(),
      }[message?.type];
      handler?.();
    }

    // ----- reading the assistant's reply -----

    function read() {
      readTimer = null;
      if (stopped) return;
      keepHost();
      const list = replies();
      if (list.length < baseline) baseline = list.length; // the site dropped messages (a new chat)
      if (instructed && list.length && instructed.path !== location.pathname) instructed.path = location.pathname;
      // Only a reply to a message sent since the bridge started counts: a page that loads its history late (a
      // reload, as real sites do) shows old replies, whose calls ran already or were never the bridge's.
      if (turn > 0 && list.length > baseline && !sent.seen) {
        sent.seen = true;
        if (sent.missing) status.textContent = 'The assistant\'s reply is read again.';
        sent.missing = false;
      } else if (enabled && turn > 0 && !sent.seen && !sent.missing && sent.changed && Date.now() - sent.at >= ASSISTANT_WAIT_MS) {
        sent.missing = true; // the page drew something since the send, but nothing this adapter calls the assistant's
        status.textContent = 'Nothing on the page matches this site\'s "assistant" selector among what appeared since the last message: the bridge cannot read the reply (bridge.check() in the notebook says more).';
        post({ type: 'unseen', turn, seconds: Math.round((Date.now() - sent.at) / 1000) });
      }
      if (enabled && turn > 0 && list.length > baseline) {
        const text = globalThis.__webmcpNbVisibleText(list.at(-1)).slice(0, MAX_REPLY_CHARS);
        const now = Date.now();
        if (text !== last.text) {
          last = { text, at: now, done: false };
          post({ type: 'reply', turn, text, done: false });
        } else if (!last.done && !busy() && now - last.at >= QUIET_MS) {
          last.done = true;
          post({ type: 'reply', turn, text, done: true });
        }
      }
      deliver();
    }
    // The page changed: read it soon. A change of the page's own (not this bar's host, not the input the user or
    // the bridge types in) after a send means the site is drawing something.
    function changed(records) {
      if (turn > 0 && !sent.changed) {
        const input = find('input');
        const ours = (node) => node === host || (input && (node === input || input.contains(node)));
        const nodes = (r) => [...r.addedNodes, ...r.removedNodes];
        sent.changed = records.some((r) => !ours(r.target) && (r.type === 'characterData' || !nodes(r).every(ours)));
      }
      readTimer ??= setTimeout(read, READ_MS);
    }

    // ----- sending, as a person does -----

    function caretToEnd(input) {
      input.focus();
      if (isField(input)) {
        input.setSelectionRange(input.value.length, input.value.length);
        return;
      }
      const range = document.createRange();
      range.selectNodeContents(input);
      range.collapse(false);
      const selection = getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
    }

    // Text and line breaks with the editing commands a keyboard produces (input events that sites' editors and
    // frameworks follow); a line break never sends. Where the command is refused, the DOM is changed directly.
    function insert(input, text) {
      if (document.execCommand('insertText', false, text)) return;
      if (isField(input)) {
        const setter = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(input), 'value').set;
        setter.call(input, input.value + text);
      } else {
        input.append(text === '\n' ? document.createElement('br') : document.createTextNode(text));
      }
      input.dispatchEvent(new InputEvent('input', { bubbles: true, inputType: 'insertText', data: text }));
    }
    function type(input, text) {
      caretToEnd(input);
      text.split('\n').forEach((line, i) => {
        if (i > 0 && (isField(input) || !document.execCommand('insertLineBreak'))) insert(input, '\n');
        if (line) insert(input, line);
      });
    }

    function noteSent(by, instructions) {
      baseline = replies().length;
      turn += 1;
      last = { text: null, at: 0, done: true };
      sent = { at: Date.now(), changed: false, seen: false, missing: false };
      post({ type: 'sent', turn, by, instructions });
    }

    async function submit(by, instructions) {
      sending = true;
      try {
        const deadline = Date.now() + SEND_WAIT_MS;
        while (Date.now() < deadline && !stopped) {
          const button = find('send');
          if (button && !disabled(button) && !busy()) {
            noteSent(by, instructions);
            button.click();
            return true;
          }
          await sleep(100);
        }
        const input = find('input');
        if (!input || stopped) return false;
        noteSent(by, instructions);
        input.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', code: 'Enter', keyCode: 13, which: 13, bubbles: true, cancelable: true }));
        return true;
      } finally {
        sending = false;
      }
    }

    const conversationNeedsInstructions = () => !instructed || instructed.key !== key || instructed.path !== location.pathname || replies().length === 0;
    function addInstructions(input) {
      if (!enabled || !tools.length || !conversationNeedsInstructions()) return false;
      type(input, suffix);
      instructed = { key, path: location.pathname };
      return true;
    }

    // The user sends (Enter in the input, or a click on send): the instructions join the message first.
    function onSend(event) {
      if (stopped || !enabled || !event.isTrusted || sending) return;
      const input = find('input');
      const send = find('send');
      const byKey = event.type === 'keydown' && event.key === 'Enter' && !event.shiftKey && !event.isComposing
        && !event.altKey && !event.ctrlKey && !event.metaKey && input?.contains(event.target);
      const byClick = event.type === 'click' && send?.contains(event.target);
      if (!byKey && !byClick) return;
      if (!input || !textOf(input).trim()) return;
      // The user sends the results the bridge typed: the turn goes on (its limits count on), as when it sends them.
      const by = typed !== null && textOf(input).includes(typed) ? 'bridge' : 'user';
      typed = null;
      if (by === 'user' && conversationNeedsInstructions() && tools.length) {
        event.preventDefault();
        event.stopImmediatePropagation();
        addInstructions(input);
        submit('user', true);
      } else {
        noteSent(by, false);
      }
    }

    async function say(text) {
      const input = find('input');
      if (!input) return post({ type: 'problem', text: 'The chat has no input this bridge can find (bridge.check() says which selector fails).' });
      type(input, text);
      const instructions = addInstructions(input);
      return submit('user', instructions);
    }

    // A result waits for this turn's reply to be complete and the site to be idle; it is sent unless the
    // user has a draft in the input (then it joins the draft and waits for them).
    async function deliver() {
      if (!results.length || sending || busy() || !last.done) return;
      const { turn: wanted, text } = results.shift();
      if (wanted !== turn) { // a reply the chat has moved past (the user sent a message meanwhile): said, not typed
        post({ type: 'problem', text: 'A result came after a new message was sent, so it was not typed into the chat; the notebook keeps it (bridge.calls).' });
        return deliver();
      }
      const input = find('input');
      if (!input) return post({ type: 'problem', text: 'The results could not be typed: the chat has no input this bridge can find.' });
      const draft = textOf(input).trim();
      type(input, draft ? `\n\n${text}` : text);
      const gone = autoSend && !draft ? await submit('bridge', false) : false;
      typed = gone ? null : text.split('\n')[0];
      status.textContent = gone ? 'Results sent to the chat.' : 'The results are in the chat\'s input: press Send to give them to the chat.';
      post({ type: 'typed', turn: wanted, sent: gone });
    }

    // ----- the bar, in a closed shadow root -----

    const host = document.createElement('webmcp-nb-bridge');
    const root = host.attachShadow({ mode: 'closed' });
    const toggle = el('button', { type: 'button' });
    const list = el('ul');
    const summary = el('summary');
    const status = el('div', { class: 'status' });
    const stack = el('div', { class: 'box' });
    const bar = el('div', { class: 'bar' },
      el('div', { class: 'row' }, el('span', { class: 'logo', text: 'webmcp-nb' }), el('span', { text: 'chat bridge' }), toggle),
      el('details', {}, summary, list),
      status);
    stack.append(bar);
    root.append(el('style', { text: STYLE }), stack);
    function keepHost() { // the page may move or remove the bar: it comes back (its style is pinned by STYLE's :host)
      if (host.parentNode !== document.documentElement || host.nextSibling) document.documentElement.append(host);
    }

    function render() {
      toggle.textContent = enabled ? 'on' : 'off';
      toggle.className = enabled ? 'on' : '';
      toggle.title = enabled ? 'The chat is told about these tools and its calls are read: click to stop' : 'Off: click to bridge the tools again';
      summary.textContent = `${tools.length} tool${tools.length === 1 ? '' : 's'} bridged`;
      list.replaceChildren(...tools.map((tool) => el('li', {},
        el('b', { text: tool.name }), ` ${tool.risk} risk · ${tool.source}`,
        tool.about ? el('div', { class: 'muted', text: tool.about }) : null)));
    }

    // The switch counts the user's click only while it is visible and uncovered, as the browser itself reports it
    // (IntersectionObserver v2: nothing drawn over it, no opacity, filter or transform on the way), and has been
    // for SEEN_MS: a page that hides it, or draws a decoy over it (even one that lets clicks through), wins nothing.
    let seenSince = null;
    const watcher = 'isVisible' in IntersectionObserverEntry.prototype
      ? new IntersectionObserver((entries) => {
        for (const entry of entries) seenSince = entry.isVisible ? (seenSince ?? performance.now()) : null;
      }, { trackVisibility: true, delay: 100 })
      : null;
    watcher?.observe(toggle);
    toggle.addEventListener('click', (event) => {
      if (!event.isTrusted) return;
      if (seenSince === null || performance.now() - seenSince < SEEN_MS) {
        const why = 'A click on the bar\'s switch did not count: something covered or hid the bar (switch it from the notebook: bridge.set_enabled).';
        status.textContent = why;
        post({ type: 'problem', text: why });
        return;
      }
      enabled = !enabled;
      render();
      post({ type: 'toggle', enabled });
    });

    // A call waits for the user's answer, which the side panel and the notebook panel take: the bar only says so.
    function showWaiting({ id, tool }) {
      const node = el('div', { class: 'waiting', role: 'status' }, el('b', { text: tool }), ` ${WAITING}.`);
      waiting.set(id, node);
      stack.append(node);
    }

    function resolveWaiting({ id, approved, by }) {
      const node = waiting.get(id);
      if (!node) return;
      node.classList.add('done');
      node.lastChild.textContent = visible(`: ${approved ? 'approved' : 'denied'}${by ? ` (${by})` : ''}.`);
      setTimeout(() => { node.remove(); waiting.delete(id); }, 4_000);
    }

    // ----- start and stop -----

    const observer = new MutationObserver(changed);
    const poll = setInterval(read, POLL_MS);
    function stop() {
      if (stopped) return;
      stopped = true;
      observer.disconnect();
      clearInterval(poll);
      clearTimeout(readTimer);
      watcher?.disconnect();
      window.removeEventListener('keydown', onSend, true);
      window.removeEventListener('click', onSend, true);
      host.remove();
      port?.disconnect();
      if (current?.stop === stop) current = null;
    }

    baseline = replies().length; // what the page showed before the bridge started is not a reply to it
    render();
    keepHost();
    observer.observe(document.documentElement, { subtree: true, childList: true, characterData: true });
    window.addEventListener('keydown', onSend, true);
    window.addEventListener('click', onSend, true);
    connect();
    post({ type: 'hello' });
    return { stop, check };
  }
})();
