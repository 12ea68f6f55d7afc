// Demo shop with NO WebMCP: a plain page that agents must drive through the DOM.
//
// Selector guide (kept stable on purpose):
//   #search, #category-filter, #max-price, #reset-filters     filter controls
//   #product-list > li.product-card[data-product-id]          one card per visible product
//     .product-name, .product-category, .product-price[data-price],
//     .product-rating[data-rating], .product-stock[data-stock] (stock left after the cart)
//     button.add-to-cart[data-product-id]                     disabled when none left
//   #result-count, #no-results
//   #cart-lines > li.cart-line[data-product-id][data-quantity]
//     .cart-line-name, .cart-line-qty, .cart-line-total[data-total], button.remove-from-cart
//   #cart-count, #cart-total[data-total], #cart-empty, #clear-cart
// All state lives in this page; reloading empties the cart.

import { PRODUCTS } from './data.js';

const $ = (id) => document.getElementById(id);
const cents = (dollars) => Math.round(dollars * 100);
const money = (amountInCents) => `$${(amountInCents / 100).toFixed(2)}`;

const state = {
  search: '',
  category: '',
  maxPrice: null, // null = no limit
  cart: new Map(), // productId -> quantity
};

const productById = (id) => PRODUCTS.find((p) => p.id === id);
const stockLeft = (product) => product.stock - (state.cart.get(product.id) ?? 0);

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

// ---------------------------------------------------------------------------
// Catalog
// ---------------------------------------------------------------------------

function visibleProducts() {
  const query = state.search.trim().toLowerCase();
  return PRODUCTS.filter((p) =>
    (!query || p.name.toLowerCase().includes(query) || p.category.toLowerCase().includes(query)) &&
    (!state.category || p.category === state.category) &&
    (state.maxPrice === null || p.price <= state.maxPrice));
}

function productCard(product) {
  const card = el('li', 'product-card');
  card.dataset.productId = product.id;
  card.dataset.category = product.category;
  card.dataset.price = product.price.toFixed(2);
  card.setAttribute('aria-labelledby', `product-${product.id}-name`);

  const name = el('h3', 'product-name', product.name);
  name.id = `product-${product.id}-name`;
  const price = el('span', 'product-price', money(cents(product.price)));
  price.dataset.price = product.price.toFixed(2);

  const left = stockLeft(product);
  const rating = el('span', 'product-rating', `★ ${product.rating.toFixed(1)}`);
  rating.dataset.rating = String(product.rating);
  rating.setAttribute('aria-label', `Rated ${product.rating} out of 5`);
  const stock = el('span', 'product-stock', left > 0 ? `${left} in stock` : 'Out of stock');
  stock.dataset.stock = String(left);
  const meta = el('div', 'product-meta');
  meta.append(rating, stock);

  const button = el('button', 'add-to-cart', left > 0 ? 'Add to cart' : 'Out of stock');
  button.type = 'button';
  button.dataset.productId = product.id;
  button.disabled = left <= 0;
  button.setAttribute('aria-label', `Add ${product.name} to cart`);

  card.append(name, el('span', 'tag product-category', product.category), price, meta, button);
  return card;
}

function renderProducts() {
  const products = visibleProducts();
  $('product-list').replaceChildren(...products.map(productCard));
  $('result-count').textContent = `${products.length} of ${PRODUCTS.length} products`;
  $('no-results').hidden = products.length > 0;
}

// ---------------------------------------------------------------------------
// Cart
// ---------------------------------------------------------------------------

function addToCart(id) {
  const product = productById(id);
  if (!product || stockLeft(product) <= 0) return;
  state.cart.set(id, (state.cart.get(id) ?? 0) + 1);
  render();
}

function removeOneFromCart(id) {
  const quantity = state.cart.get(id) ?? 0;
  if (quantity <= 1) state.cart.delete(id);
  else state.cart.set(id, quantity - 1);
  render();
}

function clearCart() {
  state.cart.clear();
  render();
}

function renderCart() {
  let totalCents = 0;
  let itemCount = 0;
  const lines = [...state.cart].map(([id, quantity]) => {
    const product = productById(id);
    const lineCents = cents(product.price) * quantity;
    totalCents += lineCents;
    itemCount += quantity;

    const line = el('li', 'cart-line');
    line.dataset.productId = id;
    line.dataset.quantity = String(quantity);
    const total = el('span', 'cart-line-total', money(lineCents));
    total.dataset.total = (lineCents / 100).toFixed(2);
    const remove = el('button', 'secondary remove-from-cart', '−');
    remove.type = 'button';
    remove.dataset.productId = id;
    remove.setAttribute('aria-label', `Remove one ${product.name} from cart`);
    line.append(el('span', 'cart-line-name', product.name), el('span', 'cart-line-qty', `× ${quantity}`), total, remove);
    return line;
  });

  $('cart-lines').replaceChildren(...lines);
  $('cart-empty').hidden = lines.length > 0;
  $('cart-count').textContent = String(itemCount);
  $('cart-total').textContent = money(totalCents);
  $('cart-total').dataset.total = (totalCents / 100).toFixed(2);
  $('clear-cart').disabled = lines.length === 0;
}

function render() {
  renderProducts();
  renderCart();
}

// ---------------------------------------------------------------------------
// Start-up
// ---------------------------------------------------------------------------

for (const category of [...new Set(PRODUCTS.map((p) => p.category))]) {
  const option = el('option', null, category);
  option.value = category;
  $('category-filter').append(option);
}

function readFilters() {
  state.search = $('search').value;
  state.category = $('category-filter').value;
  const max = $('max-price').value.trim();
  state.maxPrice = max === '' || !Number.isFinite(Number(max)) ? null : Number(max);
  renderProducts();
}

$('filters').addEventListener('input', readFilters);
$('filters').addEventListener('change', readFilters);
$('filters').addEventListener('submit', (event) => event.preventDefault());
$('reset-filters').addEventListener('click', () => {
  $('search').value = '';
  $('category-filter').value = '';
  $('max-price').value = '';
  readFilters();
});
$('product-list').addEventListener('click', (event) => {
  const button = event.target.closest('button.add-to-cart');
  if (button) addToCart(button.dataset.productId);
});
$('cart-lines').addEventListener('click', (event) => {
  const button = event.target.closest('button.remove-from-cart');
  if (button) removeOneFromCart(button.dataset.productId);
});
$('clear-cart').addEventListener('click', clearCart);

render();
