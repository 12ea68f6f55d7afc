// USER_SCRIPT world (the chat bridge's own, `webmcp-nb-bridge`), injected just before chat-bridge.js: the text of
// an element as the user sees it. The chat page owns its DOM and can write into the assistant's reply text the
// user never sees — no size, no font, drawn too small or squeezed flat, no colour or the background's (a gradient's
// too), display:none, visibility:hidden, opacity 0, blended or masked away, blurred, off its box or off the page,
// clipped away or to a sliver — and that text must never be read as a tool call. So this reads what innerText
// reads (rendered text, with its line breaks), and leaves out each text node that is not drawn where the user can
// see it: its element and every ancestor in the tree as it is drawn (a shadow tree's slot included) are checked,
// colours are compared as the browser paints them, and the text's own boxes must be big enough to read and show
// half a line at least inside the reply's box, the page and every box that clips them. What it cannot see:
// another box drawn over the text, the page's fonts' glyphs, a pseudo-element's own style (`::first-line`,
// `::highlight()`): the user's answer in a panel, not this filter, is what lets a call run.
(() => {
  'use strict';
  const MIN_FONT_PX = 4; // a line of text drawn lower than this (after transforms and zoom) cannot be read
  const MIN_ADVANCE_PX = 1; // the width each character gets, as drawn, under which the text is squeezed flat
  const MIN_OPACITY = 0.05;
  const MIN_CONTRAST = 24; // the sum of the RGB differences under which text is drawn in its background's colour
  const MIN_BOX_PX = 16; // a scrolling box narrower or lower than a line of text shows no line whole: it clips
  const MAX_BLUR_PX = 1.5; // a `filter: blur()` wider than this leaves no letter readable
  const COLOUR = /(?:rgba?|hsla?|hwb|lab|lch|oklab|oklch|color)\([^()]*\)/g; // a colour in a computed gradient

  // A computed colour as the browser paints it in sRGB (any syntax: rgb(), oklch(), color(display-p3 …)), by
  // painting one pixel of it.
  const pixel = document.createElement('canvas').getContext('2d', { willReadFrequently: true });
  const painted = new Map();
  function rgba(color) {
    const key = String(color);
    if (!painted.has(key)) {
      pixel.clearRect(0, 0, 1, 1);
      pixel.fillStyle = 'rgba(0, 0, 0, 0)';
      pixel.fillStyle = key;
      pixel.fillRect(0, 0, 1, 1);
      const [r, g, b, a] = pixel.getImageData(0, 0, 1, 1).data;
      painted.set(key, { r, g, b, a: a / 255 });
    }
    return painted.get(key);
  }
  const clear = (color) => rgba(color).a < MIN_OPACITY;
  // The parent in the tree as it is drawn: a node slotted into a shadow tree is drawn inside its slot, and a
  // shadow root's children inside its host.
  const parent = (node) => node.assignedSlot ?? node.parentElement ?? (node.parentNode instanceof ShadowRoot ? node.parentNode.host : null);
  const overlap = (a, b) => ({
    left: Math.max(a.left, b.left), top: Math.max(a.top, b.top),
    right: Math.min(a.right, b.right), bottom: Math.min(a.bottom, b.bottom),
  });
  const area = (box) => box.right - box.left >= 1 && box.bottom - box.top >= 1;
  // Whether enough of a line of text is inside a region to be read: half its height, and a character's width (all
  // of it, when it is narrower), not a sliver a clipping box leaves.
  function readable(line, region) {
    const seen = overlap(line, region);
    return seen.bottom - seen.top >= line.height / 2 && seen.right - seen.left >= Math.min(line.width, MIN_FONT_PX);
  }

  // How much of an element's content its filter lets be seen: its `opacity()` functions, and nothing once it is
  // blurred past reading.
  function filterOpacity(filter) {
    let product = 1;
    for (const [, value, percent] of String(filter).matchAll(/opacity\(\s*([\d.]+)(%?)\s*\)/g)) product *= Number(value) / (percent ? 100 : 1);
    for (const [, radius] of String(filter).matchAll(/blur\(\s*([\d.]+)px\s*\)/g)) if (Number(radius) > MAX_BLUR_PX) product = 0;
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
        || (s.clip !== 'auto' && s.clip !== '' && /absolute|fixed/.test(s.position))
        || (s.mixBlendMode && s.mixBlendMode !== 'normal') // blended into what is behind it, in any colour
        || [s.maskImage, s.webkitMaskImage].some((mask) => mask && mask !== 'none')) opacity = 0;
      const verdict = opacity * isDrawn(parent(element));
      drawn.set(element, verdict);
      return verdict;
    }

    // The region where an element's content can be seen: the page, the reply's box and every box between that
    // clips what overflows it (a scrolling box too, when it is too small to show a line whole).
    const regions = new Map();
    function region(element) {
      if (!element || element === root) return overlap(page, rootBox);
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

    // The colours that may be behind an element's text: the nearest background drawn (a gradient's colours, and
    // the colour under it unless the gradient covers it); `null` for an image, whose colours are unknown.
    function backgrounds(element) {
      for (let e = element; e; e = parent(e)) {
        const s = style(e);
        const image = s.backgroundImage === 'none' ? '' : s.backgroundImage;
        if (image && !/^(?:repeating-)?(?:linear|radial|conic)-gradient\(/.test(image)) return null;
        const stops = [...image.matchAll(COLOUR)].map(([colour]) => rgba(colour));
        const covered = stops.length > 0 && stops.every((c) => c.a > 0.5);
        const colours = [...stops, ...(covered ? [] : [rgba(s.backgroundColor)])].filter((c) => c.a > 0.5);
        if (colours.length) return colours;
      }
      return [{ r: 255, g: 255, b: 255, a: 1 }];
    }
    const alike = (a, b) => Math.abs(a.r - b.r) + Math.abs(a.g - b.g) + Math.abs(a.b - b.b) < MIN_CONTRAST;

    function seen(text) {
      const element = parent(text);
      if (!element) return false;
      const s = style(element);
      const svg = element instanceof SVGElement;
      const ink = svg ? s.fill : s.webkitTextFillColor || s.color;
      if (s.visibility !== 'visible' || (svg ? !/^(?:rgb|hsl|hwb|lab|lch|oklab|oklch|color)/.test(ink) : clear(s.color))) return false;
      if (clear(ink) || isDrawn(element) < MIN_OPACITY) return false;
      const under = backgrounds(element);
      if (under && under.every((colour) => alike(rgba(ink), colour))) return false;
      const range = document.createRange();
      range.selectNodeContents(text);
      const boxes = [...range.getClientRects()];
      // Drawn big enough to read: lines at least MIN_FONT_PX high, characters not squeezed onto each other.
      const width = boxes.reduce((sum, box) => sum + box.width, 0);
      if (!boxes.some((box) => box.height >= MIN_FONT_PX) || width < text.data.replace(/\s/g, '').length * MIN_ADVANCE_PX) return false;
      const where = region(element);
      return boxes.some((box) => readable(box, where));
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
