// Tools for the demo shop (webmcp_nb/demo_pages/shop/): they drive the page's own controls, as a user
// would, and read what the page shows. The selectors are the ones app.js documents at its top.

// @webmcp-nb fragment helpers
const $ = (selector, root = document) => root.querySelector(selector);
const $$ = (selector, root = document) => [...root.querySelectorAll(selector)];
const squash = (text) => String(text ?? '').replace(/\s+/g, ' ').trim();
const number = (text) => (text === undefined || text === '' ? null : Number(text));

function toolError(code, message) {
  return Object.assign(new Error(message), { code });
}

// One product card as a record. Numbers come from the data-* attributes, not from the formatted text.
function productRecord(card) {
  const stock = number($('.product-stock', card)?.dataset.stock);
  return {
    productId: card.dataset.productId,
    name: squash($('.product-name', card)?.textContent),
    category: card.dataset.category ?? squash($('.product-category', card)?.textContent),
    price: number($('.product-price', card)?.dataset.price),
    rating: number($('.product-rating', card)?.dataset.rating),
    stock,
    inStock: stock > 0,
  };
}

const productCards = () => $$('#product-list > li.product-card[data-product-id]');

// What the filter controls hold now.
function currentFilters() {
  const maxPrice = $('#max-price').value.trim();
  return { query: $('#search').value, category: $('#category-filter').value || null, maxPrice: maxPrice === '' ? null : Number(maxPrice) };
}

function productList() {
  const products = productCards().map(productRecord);
  // "#result-count" reads "3 of 15 products".
  const total = Number(/of (\d+)/.exec($('#result-count')?.textContent ?? '')?.[1]) || undefined;
  return {
    filters: currentFilters(),
    count: products.length,
    total,
    products,
    ...(products.length ? {} : { note: 'No product matches these filters. Call searchProducts with no arguments to see them all.' }),
  };
}

function cartState() {
  const lines = $$('#cart-lines > li.cart-line[data-product-id]').map((line) => ({
    productId: line.dataset.productId,
    name: squash($('.cart-line-name', line)?.textContent),
    quantity: Number(line.dataset.quantity),
    lineTotal: number($('.cart-line-total', line)?.dataset.total),
  }));
  return { lines, count: Number($('#cart-count').textContent), total: number($('#cart-total').dataset.total) };
}

// A value set the way typing or choosing sets it, then the event the page's filter form listens for.
function setControl(control, value, eventType) {
  const proto = control instanceof HTMLSelectElement ? HTMLSelectElement.prototype : HTMLInputElement.prototype;
  Object.getOwnPropertyDescriptor(proto, 'value').set.call(control, value);
  control.dispatchEvent(new Event(eventType, { bubbles: true }));
}

// The visible card for {productId} or {name} (exact name first, then a unique partial match).
function findProductCard({ productId, name }) {
  const cards = productCards();
  const listing = () => cards.map((card) => `${productRecord(card).name} (${card.dataset.productId})`).join(', ') || 'none';
  const filtered = Object.values(currentFilters()).some((value) => value !== null && value !== '');
  const hint = filtered ? ' The filters may hide it: call searchProducts with no arguments to show every product, then try again.' : '';
  if (productId) {
    const card = cards.find((c) => c.dataset.productId === productId);
    if (!card) throw toolError('TARGET_NOT_FOUND', `No visible product has id "${productId}". Visible products: ${listing()}.${hint}`);
    return card;
  }
  const wanted = squash(name).toLowerCase();
  const named = (card) => productRecord(card).name.toLowerCase();
  const exact = cards.filter((card) => named(card) === wanted);
  const partial = exact.length ? exact : cards.filter((card) => named(card).includes(wanted));
  if (partial.length === 1) return partial[0];
  if (partial.length > 1) {
    throw toolError('INVALID_INPUT', `"${name}" matches ${partial.length} products: `
      + `${partial.map((card) => `${productRecord(card).name} (${card.dataset.productId})`).join(', ')}. Give its productId instead.`);
  }
  throw toolError('TARGET_NOT_FOUND', `No visible product is named "${name}". Visible products: ${listing()}.${hint}`);
}

// @webmcp-nb fragment health-check
// The page must have the shape the tools rely on; otherwise say what is missing.
healthCheck(() => {
  const expected = {
    '#search': 'the search box', '#category-filter': 'the category filter', '#max-price': 'the max-price filter',
    '#filters': 'the filter form', '#product-list': 'the product list', '#cart-lines': 'the cart lines',
    '#cart-count': 'the cart count', '#cart-total': 'the cart total', '#clear-cart': 'the clear-cart button',
  };
  const missing = Object.entries(expected).filter(([selector]) => !$(selector)).map(([selector, what]) => `${what} (${selector})`);
  return missing.length ? `this page does not look like the demo shop: missing ${missing.join(', ')}` : true;
});

// @webmcp-nb fragment searchProducts
defineTool({
  name: 'searchProducts',
  title: 'Search products',
  description: 'Search and filter the catalog with the page\'s own controls, then return the products shown. '
    + 'query matches names and categories; category is one of the page\'s categories; maxPrice is in USD. '
    + 'Filters you leave out are cleared, so each call is a fresh search; no arguments shows every product.',
  inputSchema: {
    type: 'object',
    properties: {
      query: { type: 'string', description: 'Words to look for in product names or categories.' },
      category: { type: 'string', description: 'Exact category, e.g. "Kitchen" (case-insensitive).' },
      maxPrice: { type: 'number', minimum: 0, description: 'Highest price in USD.' },
    },
    additionalProperties: false,
  },
  annotations: { readOnlyHint: false },
}, async ({ query = '', category, maxPrice }) => {
  const select = $('#category-filter');
  let categoryValue = '';
  if (category) {
    const option = [...select.options].find((o) => o.value && o.value.toLowerCase() === category.trim().toLowerCase());
    if (!option) {
      const known = [...select.options].filter((o) => o.value).map((o) => o.value).join(', ');
      throw toolError('INVALID_INPUT', `There is no category "${category}". Categories: ${known}.`);
    }
    categoryValue = option.value;
  }
  // app.js re-reads all filters on any "input" or "change" event bubbling to #filters.
  setControl($('#search'), query, 'input');
  setControl(select, categoryValue, 'change');
  setControl($('#max-price'), maxPrice === undefined ? '' : String(maxPrice), 'input');
  return productList();
});

// @webmcp-nb fragment listProducts
defineTool({
  name: 'listProducts',
  title: 'List visible products',
  description: 'The products the page shows now (after any filters), with the filters in effect: id, name, '
    + 'category, price (USD), rating (of 5), stock left and inStock.',
  inputSchema: { type: 'object', properties: {}, additionalProperties: false },
  annotations: { readOnlyHint: true },
}, async () => productList());

// @webmcp-nb fragment addToCart
defineTool({
  name: 'addToCart',
  title: 'Add to cart',
  description: 'Add a product shown on the page to the cart by clicking its "Add to cart" button, quantity '
    + 'times. Name it by productId (best, from listProducts) or name. Nothing is added when there is not '
    + 'enough stock. Returns the cart afterwards.',
  inputSchema: {
    type: 'object',
    properties: {
      productId: { type: 'string', description: 'e.g. "p05", from listProducts or searchProducts.' },
      name: { type: 'string', description: 'Product name, exact or a unique part of it.' },
      quantity: { type: 'integer', minimum: 1, maximum: 99, default: 1, description: 'How many to add.' },
    },
    additionalProperties: false,
  },
  annotations: { readOnlyHint: false },
}, async ({ productId, name, quantity = 1 }) => {
  if (!productId && !name) throw toolError('INVALID_INPUT', 'Say which product: give productId (from listProducts) or name.');
  const product = productRecord(findProductCard({ productId, name }));
  if (!product.inStock) {
    throw toolError('TARGET_NOT_INTERACTABLE', `${product.name} (${product.productId}) is out of stock (its button is disabled); `
      + 'nothing was added. Pick another product.');
  }
  if (product.stock < quantity) {
    throw toolError('TARGET_NOT_INTERACTABLE', `Only ${product.stock} ${product.name} left in stock, not ${quantity}; `
      + `nothing was added. Ask for at most ${product.stock}.`);
  }
  const before = cartState().lines.find((line) => line.productId === product.productId)?.quantity ?? 0;
  for (let i = 0; i < quantity; i++) {
    // Every click re-renders the list, so the button is looked up afresh each time.
    const button = $(`button.add-to-cart[data-product-id="${CSS.escape(product.productId)}"]`, findProductCard({ productId: product.productId }));
    if (!button || button.disabled) {
      throw toolError('TARGET_NOT_INTERACTABLE', `The "Add to cart" button of ${product.name} stopped working after ${i} of ${quantity}; `
        + 'call readCart to see what the cart holds.');
    }
    button.click();
  }
  const cart = cartState();
  const line = cart.lines.find((l) => l.productId === product.productId);
  return { added: (line?.quantity ?? 0) - before, product: { productId: product.productId, name: product.name, price: product.price }, cart };
});

// @webmcp-nb fragment readCart
defineTool({
  name: 'readCart',
  title: 'Read the cart',
  description: 'The cart: lines {productId, name, quantity, lineTotal}, the item count and the total in USD.',
  inputSchema: { type: 'object', properties: {}, additionalProperties: false },
  annotations: { readOnlyHint: true },
}, async () => cartState());

// @webmcp-nb fragment clearCart
defineTool({
  name: 'clearCart',
  title: 'Clear the cart',
  description: 'Empty the cart with the page\'s "Clear cart" button. Returns the (empty) cart.',
  inputSchema: { type: 'object', properties: {}, additionalProperties: false },
  annotations: { readOnlyHint: false },
  risk: 'high', // it deletes what the user chose: agents always ask first
}, async () => {
  const button = $('#clear-cart');
  if (button.disabled) return { cleared: false, note: 'The cart was already empty.', cart: cartState() };
  button.click();
  return { cleared: true, cart: cartState() };
});
