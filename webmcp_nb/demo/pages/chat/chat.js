// A static page that behaves like a web chat, for the chat-site bridge's demo and tests: it sends the
// conversation to an OpenAI-compatible endpoint given as ?model=BASE_URL (webmcp_nb.testing.ScriptedServer),
// streams the answer into the page a few characters at a time, renders markdown the way chat sites do (HTML
// escaped, fenced code blocks, inline code, bold), swaps a finished reply's streaming view for a final one, and
// takes messages from a contenteditable input whose send button is enabled only once something is typed.
const params = new URLSearchParams(location.search);
const endpoint = params.get('model');
const messages = document.getElementById('messages');
const composer = document.getElementById('composer');
const editor = composer.querySelector('.editor');
const send = composer.querySelector('.send');
const conversation = []; // {role, content}, as the endpoint gets it
let answering = false;

const CHARS_PER_UPDATE = 3;
const UPDATE_MS = 8;

const escape = (text) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function inline(text) {
  return escape(text)
    .replace(/`([^`\n]+)`/g, '<code>$1</code>')
    .replace(/\*\*([^*\n]+)\*\*/g, '<strong>$1</strong>');
}

// Markdown as chat sites render it: text is escaped (a tag the model writes shows as text), ``` fences become
// code blocks (an unclosed fence, while the reply streams, is a code block up to the end), blank lines paragraphs.
function markdown(source) {
  const html = [];
  const parts = source.split(/^```[\w-]*[ \t]*$/m);
  parts.forEach((part, i) => {
    if (i % 2 === 1) {
      html.push(`<pre><code>${escape(part.replace(/^\n|\n$/g, ''))}</code></pre>`);
      return;
    }
    for (const block of part.split(/\n{2,}/)) {
      if (block.trim()) html.push(`<p>${inline(block.trim()).replace(/\n/g, '<br>')}</p>`);
    }
  });
  return html.join('');
}

function bubble(role, text, streaming = false) {
  const node = document.createElement('div');
  node.className = `message ${role}${streaming ? ' streaming' : ''}`;
  const content = document.createElement('div');
  content.className = 'content';
  if (role === 'assistant') content.innerHTML = markdown(text);
  else content.textContent = text;
  node.append(content);
  return node;
}

const follow = () => window.scrollTo(0, document.documentElement.scrollHeight); // the newest message in view

function redraw() {
  messages.replaceChildren(...conversation.map((m) => bubble(m.role, m.content)));
}

async function* deltas(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    const events = buffer.split('\n\n');
    buffer = events.pop();
    for (const event of events) {
      const data = event.replace(/^data: /, '');
      if (data === '[DONE]') return;
      const text = JSON.parse(data).choices?.[0]?.delta?.content;
      if (text) yield text;
    }
  }
}

async function answer() {
  answering = true;
  updateSend();
  const live = bubble('assistant', '', true);
  messages.append(live);
  let text = '';
  try {
    const response = await fetch(`${endpoint}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'scripted', stream: true, messages: conversation }),
    });
    if (!response.ok) throw new Error(`the model answered ${response.status}`);
    for await (const piece of deltas(response)) {
      for (let i = 0; i < piece.length; i += CHARS_PER_UPDATE) {
        text += piece.slice(i, i + CHARS_PER_UPDATE);
        live.firstChild.innerHTML = markdown(text);
        follow();
        await new Promise((done) => setTimeout(done, UPDATE_MS));
      }
    }
  } catch (error) {
    text = `(no answer: ${error.message})`;
  }
  conversation.push({ role: 'assistant', content: text });
  live.replaceWith(bubble('assistant', text)); // the streaming view gives way to the final one, as on chat sites
  follow();
  answering = false;
  updateSend();
}

function submit() {
  const text = editor.innerText.replace(/\n$/, '');
  if (!text.trim() || answering) return;
  conversation.push({ role: 'user', content: text });
  messages.append(bubble('user', text));
  follow();
  editor.replaceChildren();
  updateSend();
  answer();
}

function updateSend() {
  send.disabled = answering || !editor.innerText.trim();
}

editor.addEventListener('input', updateSend);
editor.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    submit();
  }
});
composer.addEventListener('submit', (event) => {
  event.preventDefault();
  submit();
});
document.getElementById('rerender').addEventListener('click', redraw);
document.getElementById('model-note').textContent = endpoint
  ? `Answers come from ${endpoint}.`
  : 'No model: open this page with ?model=BASE_URL (an OpenAI-compatible endpoint, e.g. webmcp_nb.testing.ScriptedServer).';
