// USER_SCRIPT world (its own, `webmcp-nb-bridge`), injected by worker/chat-bridge.js when a notebook opens the
// chat-site bridge in this tab (webmcp_nb/bridge). The page side of the bridge, and nothing more:
// - it reads the chat through the site adapter's selectors (data: webmcp_nb/bridge/chat_sites/*.json) and tells
//   the notebook the text of the assistant's latest reply as it streams and once it is complete; the notebook
//   finds the calls in it (the agent's parser), runs them and decides everything;
// - it adds the notebook's tool instructions to what the user sends, and types results back as a person does
//   (input events, line breaks that do not send), sending them once the site has finished answering;
// - its bar (the bridged tools, on/off) and confirm cards live in a closed shadow root, and take only the
//   user's own clicks (trusted events, and not in the first half second a card is shown).
// A reply is known by the turn it answers (how many messages were sent since the bridge started) and by its
// text, never by its element: sites re-render finished replies. Page text is read with innerText and shown only
// as textContent.
(() => {
  'use strict';
  const PORT = 'webmcp-nb-bridge';
  const MAX_REPLY_CHARS = 200_000;
  const READ_MS = 120; // the page is read at most this often while it changes, and every POLL_MS anyway
  const POLL_MS = 300;
  const QUIET_MS = 700; // a reply is complete when the site is not busy and its text stayed the same this long
  const SEND_WAIT_MS = 5_000;
  const ANSWER_DELAY_MS = 500;
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
    :host { all: initial; }
    .box { font: 12px/1.4 system-ui, sans-serif; color: #1f2328; width: 300px; display: flex; flex-direction: column; gap: 6px; }
    .bar { background: #fff; border: 1px solid #d0d7de; border-radius: 8px; padding: 6px 8px; box-shadow: 0 2px 8px #0002; }
    .row { display: flex; align-items: center; gap: 6px; flex-wrap: wrap; }
    .logo { font-weight: 700; }
    .status { color: #57606a; overflow-wrap: anywhere; }
    button { font: inherit; border: 1px solid #d0d7de; border-radius: 6px; background: #f6f8fa; padding: 2px 8px; cursor: pointer; }
    button:disabled { opacity: .5; cursor: default; }
    button.on { background: #dafbe1; border-color: #1a7f37; }
    button.approve { background: #1f883d; border-color: #1f883d; color: #fff; }
    details ul { margin: 4px 0 0; padding-left: 16px; max-height: 160px; overflow: auto; }
    .card, .offer { background: #fff; border: 1px solid #d0d7de; border-left: 4px solid #9a6700; border-radius: 8px; padding: 6px 8px; box-shadow: 0 2px 8px #0002; }
    .card.risk-high { border-left-color: #cf222e; } .card.risk-low { border-left-color: #1a7f37; }
    .risk { font-weight: 600; } .risk-high .risk { color: #cf222e; } .risk-medium .risk { color: #9a6700; }
    pre { margin: 4px 0; max-height: 200px; overflow: auto; background: #f6f8fa; padding: 4px; white-space: pre-wrap; overflow-wrap: anywhere; }
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
    const results = []; // {turn, text}, typed once this turn's reply is complete and the site is idle
    const cards = new Map();

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
        if (!stopped) stop(); // the worker let go of this bridge (a new one, or the notebook left)
      });
    }
    const post = (message) => port?.postMessage({ session, ...message });

    function onMessage(message) {
      const handler = {
        config: () => {
          ({ site, tools, suffix, key, autoSend, enabled } = message);
          render();
        },
        card: () => showCard(message),
        resolve: () => resolveCard(message),
        offer: () => showOffer(message),
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
      if (enabled && turn > 0 && list.length > baseline) {
        const text = (list.at(-1).innerText ?? '').slice(0, MAX_REPLY_CHARS);
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
    const schedule = () => { readTimer ??= setTimeout(read, READ_MS); };

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
      if (conversationNeedsInstructions() && tools.length) {
        event.preventDefault();
        event.stopImmediatePropagation();
        addInstructions(input);
        submit('user', true);
      } else {
        noteSent('user', false);
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
      const sent = autoSend && !draft ? await submit('bridge', false) : false;
      status.textContent = sent ? 'Results sent to the chat.' : 'The results are in the chat\'s input: send them when you are ready.';
      post({ type: 'typed', turn: wanted, sent });
    }

    // ----- the bar and the cards, in a closed shadow root -----

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
    const HOST_STYLE = { position: 'fixed', top: '12px', right: '12px', 'z-index': '2147483647', display: 'block' };
    function keepHost() { // the page may move, hide or remove the bar: it comes back as it was
      if (host.parentNode !== document.documentElement || host.nextSibling) document.documentElement.append(host);
      for (const [name, value] of Object.entries(HOST_STYLE)) {
        if (host.style.getPropertyValue(name) !== value || host.style.getPropertyPriority(name) !== 'important') host.style.setProperty(name, value, 'important');
      }
    }

    function render() {
      toggle.textContent = enabled ? 'on' : 'off';
      toggle.className = enabled ? 'on' : '';
      toggle.title = enabled ? 'The chat is told about these tools and its calls run: click to stop' : 'Off: click to bridge the tools again';
      summary.textContent = `${tools.length} tool${tools.length === 1 ? '' : 's'} bridged`;
      list.replaceChildren(...tools.map((tool) => el('li', {},
        el('b', { text: tool.name }), ` ${tool.risk} risk · ${tool.source}`,
        tool.about ? el('div', { class: 'muted', text: tool.about }) : null)));
    }
    toggle.addEventListener('click', (event) => {
      if (!event.isTrusted) return;
      enabled = !enabled;
      render();
      post({ type: 'toggle', enabled });
    });

    function answerButtons(onAnswer) {
      const approve = el('button', { type: 'button', class: 'approve', text: 'Run it' });
      const deny = el('button', { type: 'button', class: 'deny', text: 'Don\'t run' });
      approve.disabled = deny.disabled = true;
      setTimeout(() => { approve.disabled = deny.disabled = false; }, ANSWER_DELAY_MS); // no rushed click counts
      for (const [button, approved] of [[approve, true], [deny, false]]) {
        button.addEventListener('click', (event) => {
          if (!event.isTrusted || button.disabled) return;
          approve.disabled = deny.disabled = true;
          onAnswer(approved);
        });
      }
      return [approve, deny];
    }

    function showCard({ id, tool, source, risk, arguments: args }) {
      const note = el('span', { class: 'muted' });
      const [approve, deny] = answerButtons((approved) => {
        note.textContent = approved ? 'Approved…' : 'Denied…';
        post({ type: 'answer', id, approved });
      });
      const node = el('div', { class: `card risk-${['low', 'medium', 'high'].includes(risk) ? risk : 'medium'}`, role: 'group', 'aria-label': 'Confirm a tool call' },
        el('div', {}, 'The assistant wants to run ', el('b', { text: tool })),
        el('div', { class: 'muted' }, el('span', { class: 'risk', text: `${risk} risk` }), ` · ${source}`),
        el('pre', { text: JSON.stringify(args ?? {}, null, 1) }),
        el('div', { class: 'row' }, approve, deny, note));
      cards.set(id, { node, note, buttons: [approve, deny] });
      stack.append(node);
    }

    function resolveCard({ id, approved, by }) {
      const card = cards.get(id);
      if (!card) return;
      for (const button of card.buttons) button.disabled = true;
      card.note.textContent = visible(`${approved ? 'Approved' : 'Denied'}${by ? ` (${by})` : ''}`);
      setTimeout(() => { card.node.remove(); cards.delete(id); }, 4_000);
    }

    function showOffer({ key: offer, tool, arguments: args }) {
      const node = el('div', { class: 'offer' },
        el('div', {}, 'The last reply looks like a call of ', el('b', { text: tool }), ' written without its tags:'),
        el('pre', { text: JSON.stringify(args ?? {}, null, 1) }));
      const [run, skip] = answerButtons((approved) => {
        node.remove();
        if (approved) post({ type: 'run', key: offer });
      });
      run.textContent = 'Run this call';
      skip.textContent = 'Ignore';
      node.append(el('div', { class: 'row' }, run, skip));
      stack.append(node);
    }

    // ----- start and stop -----

    const observer = new MutationObserver(schedule);
    const poll = setInterval(read, POLL_MS);
    function stop() {
      if (stopped) return;
      stopped = true;
      observer.disconnect();
      clearInterval(poll);
      clearTimeout(readTimer);
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
