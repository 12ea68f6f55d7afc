// USER_SCRIPT world (the chat bridge's own, `webmcp-nb-bridge`), injected just before chat-bridge.js: the text of
// an element as the user sees it. The chat page owns its DOM and can write into the assistant's reply text the
// user never sees — no size, no font, no colour or the background's, display:none, visibility:hidden, opacity 0,
// off its box or off the page, clipped away — and that text must never be read as a tool call. So this reads
// what innerText reads (rendered text, with its line breaks), and leaves out each text node that is not drawn
// where the user can see it: its element and every ancestor are checked, and the text's own boxes must have a size
// and overlap the reply's box, the page and every box that clips them.
(() => {
  'use strict';
  const MIN_FONT_PX = 4;
  const MIN_OPACITY = 0.05;
  const MIN_CONTRAST = 24; // the sum of the RGB differences under which text is drawn in its background's colour
  const MIN_BOX_PX = 2; // a scrolling box smaller than this shows nothing

  const rgba = (color) => {
    const parts = String(color).match(/[\d.]+/g)?.map(Number) ?? [];
    return parts.length >= 3 ? { r: parts[0], g: parts[1], b: parts[2], a: parts.length > 3 ? parts[3] : 1 } : null;
  };
  const clear = (color) => (rgba(color)?.a ?? 1) < MIN_OPACITY;
  const parent = (node) => node.parentElement ?? (node.parentNode instanceof ShadowRoot ? node.parentNode.host : null);
  const overlap = (a, b) => ({
    left: Math.max(a.left, b.left), top: Math.max(a.top, b.top),
    right: Math.min(a.right, b.right), bottom: Math.min(a.bottom, b.bottom),
  });
  const area = (box) => box.right - box.left >= 1 && box.bottom - box.top >= 1;

  function filterOpacity(filter) {
    let product = 1;
    for (const [, value, percent] of String(filter).matchAll(/opacity\(\s*([\d.]+)(%?)\s*\)/g)) product *= Number(value) / (percent ? 100 : 1);
    return product;
  }

  // A reader for one pass over one reply: styles and verdicts are kept for the pass (the page is not re-laid out
  // while it runs).
  function reader(root) {
    const styles = new Map();
    const style = (element) => {
      if (!styles.has(element)) styles.set(element, getComputedStyle(element));
      return styles.get(element);
    };
    const doc = document.documentElement;
    const page = { left: -scrollX, top: -scrollY, right: Math.max(doc.scrollWidth, innerWidth) - scrollX, bottom: Math.max(doc.scrollHeight, innerHeight) - scrollY };
    const box = root.getBoundingClientRect();
    const rootBox = area(box) ? box : page; // (a reply drawn as `display: contents` has no box of its own)

    // Whether an element and its ancestors let its text be seen (their own effects: opacity, clipping, masks).
    const drawn = new Map();
    function isDrawn(element) {
      if (!element) return 1;
      if (drawn.has(element)) return drawn.get(element);
      const s = style(element);
      let opacity = Number(s.opacity) * filterOpacity(s.filter);
      if (s.display === 'none' || s.contentVisibility === 'hidden' || s.clipPath !== 'none'
        || (s.clip !== 'auto' && s.clip !== '' && /absolute|fixed/.test(s.position))) opacity = 0;
      const verdict = opacity * isDrawn(parent(element));
      drawn.set(element, verdict);
      return verdict;
    }

    // The region where an element's content can be seen: the page, the reply's box and every box between that
    // clips what overflows it (a scrolling box too, when it is too small to show anything).
    const regions = new Map();
    function region(element) {
      if (!element || element === root || !root.contains(element)) return overlap(page, rootBox);
      if (regions.has(element)) return regions.get(element);
      let inside = region(parent(element));
      const s = style(element);
      if (s.overflowX !== 'visible' || s.overflowY !== 'visible') {
        const box = element.getBoundingClientRect();
        const clips = /hidden|clip/.test(`${s.overflowX} ${s.overflowY}`) || box.width < MIN_BOX_PX || box.height < MIN_BOX_PX;
        if (clips) inside = overlap(inside, box);
      }
      regions.set(element, inside);
      return inside;
    }

    function background(element) {
      for (let e = element; e; e = parent(e)) {
        const s = style(e);
        if (s.backgroundImage !== 'none') return null; // an image behind the text: its colour is unknown
        const color = rgba(s.backgroundColor);
        if (color && color.a > 0.5) return color;
      }
      return { r: 255, g: 255, b: 255, a: 1 };
    }

    function seen(text) {
      const element = parent(text);
      if (!element) return false;
      const s = style(element);
      if (s.visibility !== 'visible' || parseFloat(s.fontSize) < MIN_FONT_PX) return false;
      if (clear(s.color) || clear(s.webkitTextFillColor)) return false;
      if (isDrawn(element) < MIN_OPACITY) return false;
      const ink = rgba(s.webkitTextFillColor) ?? rgba(s.color);
      const under = background(element);
      if (ink && under && Math.abs(ink.r - under.r) + Math.abs(ink.g - under.g) + Math.abs(ink.b - under.b) < MIN_CONTRAST) return false;
      const range = document.createRange();
      range.selectNodeContents(text);
      const where = region(element);
      return [...range.getClientRects()].some((box) => area(overlap(box, where)));
    }

    return { style, seen };
  }

  // The text of `root` as innerText gives it (block boxes and <br> break lines, a paragraph is set off by a blank
  // line, spaces collapse outside preformatted text), with what the user cannot see left out.
  function visibleText(root) {
    const { style, seen } = reader(root);
    const parts = []; // strings, and numbers: line breaks required there
    function visit(node, pre) {
      if (node.nodeType === Node.TEXT_NODE) {
        if (!node.data) return;
        const blank = !/\S/.test(node.data);
        if (!blank && !seen(node)) return;
        parts.push({ text: pre ? node.data : node.data.replace(/[ \t\n\r\f]+/g, ' '), pre });
        return;
      }
      if (node.nodeType !== Node.ELEMENT_NODE) return;
      const s = style(node);
      if (s.display === 'none') return;
      if (node.localName === 'br') {
        parts.push({ text: '\n', pre: true });
        return;
      }
      const lines = node.localName === 'p' ? 2 : !s.display.startsWith('inline') && s.display !== 'contents' ? 1 : 0;
      const keep = pre || /^pre|break-spaces/.test(s.whiteSpace);
      if (lines) parts.push(lines);
      for (const child of node.childNodes) visit(child, keep);
      if (lines) parts.push(lines);
    }
    for (const child of root.childNodes) visit(child, /^pre|break-spaces/.test(style(root).whiteSpace));

    let out = '';
    let breaks = 0;
    for (const part of parts) {
      if (typeof part === 'number') {
        breaks = Math.max(breaks, part);
        continue;
      }
      let { text } = part;
      if (breaks && out) {
        out = out.replace(/ +$/, '') + '\n'.repeat(breaks);
      }
      breaks = 0;
      if (!part.pre && (out === '' || out.endsWith('\n') || out.endsWith(' '))) text = text.replace(/^ /, '');
      out += text;
    }
    return out.replace(/ +$/, '');
  }

  globalThis.__webmcpNbVisibleText = visibleText;
})();
