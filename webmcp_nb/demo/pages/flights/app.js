// Flight search demo: a single-page app that exposes WebMCP tools.
//
// Views and the tools each one registers (document.modelContext.registerTool):
//   search view   -> searchFlights
//   results view  -> searchFlights, listFlights, setFilters, resetFilters
//
// searchFlights runs the search inside the page (no navigation): it switches to the
// results view and pushes a history entry. The three results-only tools share one
// AbortController; "New search" (or going Back to the search view) aborts it, which
// unregisters them.
//
// A search in the URL (?origin=LON&destination=NYC&tripType=round-trip&outboundDate=...
// &inboundDate=...&passengers=2) opens straight on the results view. One-way trips have no inboundDate.

import { AIRLINES, generateFlights, hhmmToMinutes, minutesToHHMM, placeName } from './data.js';

const modelContext = document.modelContext;

const SEARCH_KEYS = ['origin', 'destination', 'tripType', 'outboundDate', 'inboundDate', 'passengers'];
const REQUIRED_KEYS = SEARCH_KEYS.filter((key) => key !== 'inboundDate'); // round trips need it too

const DEFAULT_FILTERS = Object.freeze({
  stops: [],
  airlines: [],
  origins: [],
  destinations: [],
  minPrice: 0,
  maxPrice: null, // null = no upper limit
  departureTime: [0, 1439],
  arrivalTime: [0, 1439],
  flightIds: [],
});

const state = {
  view: 'search',
  search: null, // the current search parameters
  searchId: null,
  flights: [], // every flight of the current search
  filters: copyFilters(DEFAULT_FILTERS),
};

let searchCounter = 0;
let resultsToolsController = null; // set while the results-only tools are registered

const $ = (id) => document.getElementById(id);

// ---------------------------------------------------------------------------
// WebMCP tools
// ---------------------------------------------------------------------------

const iataCode = (description) => ({ type: 'string', pattern: '^[A-Z]{3}$', description });
const isoDate = (description) => ({ type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$', description });

const searchFlightsTool = {
  name: 'searchFlights',
  title: 'Search flights',
  description:
    'Searches for flights and shows the results in the page. After a search, the tools ' +
    'listFlights, setFilters and resetFilters become available to inspect and filter the results.',
  inputSchema: {
    type: 'object',
    properties: {
      origin: iataCode('Origin: 3-letter IATA airport or city code, e.g. "LHR" or "LON".'),
      destination: iataCode('Destination: 3-letter IATA airport or city code, e.g. "JFK" or "NYC".'),
      tripType: { type: 'string', enum: ['one-way', 'round-trip'], description: 'The trip type.' },
      outboundDate: isoDate('Outbound date, YYYY-MM-DD.'),
      inboundDate: isoDate('Return date, YYYY-MM-DD: required for round trips, left out for one-way trips.'),
      passengers: { type: 'integer', minimum: 1, description: 'Number of passengers.' },
    },
    required: REQUIRED_KEYS,
  },
  annotations: { readOnlyHint: false },
  execute(input) {
    const search = parseSearch(input);
    if (search.error) return { error: search.error };
    runSearch(search);
    showToast('New search started by an AI agent');
    const count = state.flights.length;
    return {
      message: `Found ${count} flights from ${search.origin} to ${search.destination}. ` +
        'Use listFlights to read them and setFilters to narrow them down.',
      count,
      searchId: state.searchId,
      search,
    };
  },
};

const listFlightsTool = {
  name: 'listFlights',
  title: 'List flights',
  description:
    'Returns the flights currently shown in the results (after filters). Times are "HH:MM" ' +
    '(arrivalDayOffset 1 = next day); price is per passenger in the given currency.',
  inputSchema: { type: 'object', properties: {} },
  annotations: { readOnlyHint: true, untrustedContentHint: false },
  execute() {
    return visibleFlights().map(publicFlight);
  },
};

const minuteRange = (description) => ({
  type: 'array',
  items: { type: 'integer', minimum: 0, maximum: 1439 },
  minItems: 2,
  maxItems: 2,
  description,
});

const setFiltersTool = {
  name: 'setFilters',
  title: 'Set flight filters',
  description:
    'Filters the flight results shown in the page. Replaces the current filters: any filter ' +
    'left out goes back to its default (no filtering). Returns the number of visible flights.',
  inputSchema: {
    type: 'object',
    properties: {
      stops: { type: 'array', items: { type: 'integer', minimum: 0 }, description: 'Allowed numbers of stops, e.g. [0, 1].' },
      airlines: { type: 'array', items: { type: 'string' }, description: 'Airline IATA codes ("BA") or names ("British Airways").' },
      origins: { type: 'array', items: { type: 'string', pattern: '^[A-Z]{3}$' }, description: 'Origin airport IATA codes.' },
      destinations: { type: 'array', items: { type: 'string', pattern: '^[A-Z]{3}$' }, description: 'Destination airport IATA codes.' },
      minPrice: { type: 'number', minimum: 0, description: 'Minimum price per passenger.' },
      maxPrice: { type: 'number', minimum: 0, description: 'Maximum price per passenger.' },
      departureTime: minuteRange('Departure window [from, to] in minutes after midnight, e.g. [360, 720] for 06:00-12:00.'),
      arrivalTime: minuteRange('Arrival window [from, to] in minutes after midnight.'),
      flightIds: { type: 'array', items: { type: 'string' }, description: 'Only show these flight ids (from listFlights).' },
    },
  },
  annotations: { readOnlyHint: false },
  execute(input) {
    const result = parseFilters(input);
    if (result.error) return { error: result.error };
    applyFilters(result.filters);
    showToast('Filters updated by an AI agent');
    return filterSummary();
  },
};

const resetFiltersTool = {
  name: 'resetFilters',
  title: 'Reset flight filters',
  description: 'Removes all filters so every flight of the current search is shown.',
  inputSchema: { type: 'object', properties: {} },
  annotations: { readOnlyHint: false },
  execute() {
    applyFilters(copyFilters(DEFAULT_FILTERS));
    showToast('Filters reset by an AI agent');
    return filterSummary();
  },
};

function registerTool(tool, signal) {
  modelContext
    .registerTool(tool, signal ? { signal } : undefined)
    .catch((error) => console.error(`Could not register WebMCP tool ${tool.name}:`, error));
}

function registerResultsTools() {
  if (resultsToolsController) return; // already registered
  resultsToolsController = new AbortController();
  for (const tool of [listFlightsTool, setFiltersTool, resetFiltersTool]) {
    registerTool(tool, resultsToolsController.signal);
  }
}

function unregisterResultsTools() {
  resultsToolsController?.abort();
  resultsToolsController = null;
}

// ---------------------------------------------------------------------------
// Search
// ---------------------------------------------------------------------------

/** Validates raw search input; returns a clean search object or {error}. */
function parseSearch(input) {
  if (!input || typeof input !== 'object') return { error: 'Expected an object with the search parameters.' };
  const absent = (key) => input[key] === undefined || input[key] === null || input[key] === '';
  const needed = input.tripType === 'round-trip' ? SEARCH_KEYS : REQUIRED_KEYS;
  const missing = needed.filter(absent);
  if (missing.length) return { error: `Missing required parameter(s): ${missing.join(', ')}.` };

  const search = {
    origin: String(input.origin).trim(),
    destination: String(input.destination).trim(),
    tripType: String(input.tripType),
    outboundDate: String(input.outboundDate),
    passengers: Number(input.passengers),
  };
  if (search.tripType === 'round-trip') search.inboundDate = String(input.inboundDate); // one-way: none
  for (const key of ['origin', 'destination']) {
    if (!/^[A-Z]{3}$/.test(search[key])) return { error: `${key} must be a 3-letter uppercase IATA code, got "${search[key]}".` };
  }
  if (search.origin === search.destination) return { error: 'origin and destination must differ.' };
  if (!['one-way', 'round-trip'].includes(search.tripType)) return { error: 'tripType must be "one-way" or "round-trip".' };
  for (const key of ['outboundDate', 'inboundDate'].filter((k) => k in search)) {
    if (!isValidDate(search[key])) return { error: `${key} must be a real date in YYYY-MM-DD format, got "${search[key]}".` };
  }
  if (search.tripType === 'round-trip' && search.inboundDate < search.outboundDate) {
    return { error: 'inboundDate must not be before outboundDate.' };
  }
  if (!Number.isInteger(search.passengers) || search.passengers < 1) return { error: 'passengers must be an integer of at least 1.' };
  return search;
}

function isValidDate(text) {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const date = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === text;
}

/** Runs a search in-app and shows the results view. */
function runSearch(search, { replaceHistory = false } = {}) {
  state.search = search;
  state.searchId = `search-${++searchCounter}`;
  state.flights = generateFlights(search);
  state.filters = copyFilters(DEFAULT_FILTERS);
  const entry = { view: 'results', search, searchId: state.searchId };
  if (replaceHistory) history.replaceState(entry, '', urlFor(search));
  else history.pushState(entry, '', urlFor(search));
  showResultsView();
}

/** Same path; keeps unrelated query parameters (such as ?tools=N). */
function urlFor(search) {
  const params = new URLSearchParams(location.search);
  for (const key of SEARCH_KEYS) {
    params.delete(key);
    if (search && search[key] !== undefined) params.set(key, String(search[key]));
  }
  const query = params.toString();
  return location.pathname + (query ? `?${query}` : '');
}

// ---------------------------------------------------------------------------
// Filters
// ---------------------------------------------------------------------------

function copyFilters(filters) {
  return JSON.parse(JSON.stringify(filters));
}

/** Validates setFilters input; returns {filters} (defaults filled in) or {error}. */
function parseFilters(input) {
  if (input === undefined || input === null) input = {};
  if (typeof input !== 'object' || Array.isArray(input)) return { error: 'Expected an object of filters.' };
  const filters = copyFilters(DEFAULT_FILTERS);

  const arrayOf = (key, check, what) => {
    if (input[key] === undefined) return null;
    if (!Array.isArray(input[key]) || !input[key].every(check)) return `${key} must be an array of ${what}.`;
    return null;
  };
  const problems = [
    arrayOf('stops', (v) => Number.isInteger(v) && v >= 0, 'non-negative integers'),
    arrayOf('airlines', (v) => typeof v === 'string', 'strings'),
    arrayOf('origins', (v) => typeof v === 'string', 'IATA code strings'),
    arrayOf('destinations', (v) => typeof v === 'string', 'IATA code strings'),
    arrayOf('flightIds', (v) => typeof v === 'string' || typeof v === 'number', 'flight id strings'),
  ];
  for (const key of ['minPrice', 'maxPrice']) {
    const value = input[key];
    if (value !== undefined && value !== null && !(typeof value === 'number' && Number.isFinite(value) && value >= 0)) {
      problems.push(`${key} must be a non-negative number.`);
    }
  }
  for (const key of ['departureTime', 'arrivalTime']) {
    const value = input[key];
    if (value === undefined) continue;
    const ok = Array.isArray(value) && value.length === 2 &&
      value.every((v) => typeof v === 'number' && v >= 0 && v <= 1440) && value[0] <= value[1];
    if (!ok) problems.push(`${key} must be [fromMinute, toMinute] with 0 <= from <= to <= 1439.`);
  }
  const error = problems.filter(Boolean).join(' ');
  if (error) return { error };

  if (input.stops) filters.stops = [...new Set(input.stops)].sort((a, b) => a - b);
  if (input.airlines) filters.airlines = input.airlines.map(airlineCodeFor);
  if (input.origins) filters.origins = input.origins.map((code) => code.trim().toUpperCase());
  if (input.destinations) filters.destinations = input.destinations.map((code) => code.trim().toUpperCase());
  if (input.flightIds) filters.flightIds = input.flightIds.map((id) => String(id).trim().toUpperCase());
  if (typeof input.minPrice === 'number') filters.minPrice = input.minPrice;
  if (typeof input.maxPrice === 'number') filters.maxPrice = input.maxPrice;
  if (input.departureTime) filters.departureTime = input.departureTime.map((v) => Math.min(v, 1439));
  if (input.arrivalTime) filters.arrivalTime = input.arrivalTime.map((v) => Math.min(v, 1439));
  return { filters };
}

/** "BA", "ba" or "British Airways" -> "BA". Unknown values are kept (they match nothing). */
function airlineCodeFor(value) {
  const text = value.trim();
  const airline = AIRLINES.find(
    (a) => a.code === text.toUpperCase() || a.name.toLowerCase() === text.toLowerCase(),
  );
  return airline ? airline.code : text;
}

function matchesFilters(flight, filters) {
  const departure = hhmmToMinutes(flight.departureTime);
  const arrival = hhmmToMinutes(flight.arrivalTime);
  return (
    (filters.stops.length === 0 || filters.stops.includes(flight.stops)) &&
    (filters.airlines.length === 0 || filters.airlines.includes(flight.airlineCode)) &&
    (filters.origins.length === 0 || filters.origins.includes(flight.origin)) &&
    (filters.destinations.length === 0 || filters.destinations.includes(flight.destination)) &&
    (filters.flightIds.length === 0 || filters.flightIds.includes(flight.id)) &&
    flight.price >= filters.minPrice &&
    (filters.maxPrice === null || flight.price <= filters.maxPrice) &&
    departure >= filters.departureTime[0] && departure <= filters.departureTime[1] &&
    arrival >= filters.arrivalTime[0] && arrival <= filters.arrivalTime[1]
  );
}

function visibleFlights() {
  return state.flights.filter((flight) => matchesFilters(flight, state.filters));
}

function applyFilters(filters) {
  state.filters = filters;
  renderResults();
}

function filterSummary() {
  return { count: visibleFlights().length, total: state.flights.length, filters: copyFilters(state.filters) };
}

/** The flight fields exposed to agents by listFlights. */
function publicFlight(flight) {
  const { id, airline, airlineCode, origin, destination, departureTime, arrivalTime,
    arrivalDayOffset, durationMinutes, stops, price, currency } = flight;
  return { id, airline, airlineCode, origin, destination, departureTime, arrivalTime,
    arrivalDayOffset, durationMinutes, stops, price, currency };
}

// ---------------------------------------------------------------------------
// Views and rendering (DOM built with createElement/textContent only)
// ---------------------------------------------------------------------------

function showSearchView() {
  state.view = 'search';
  $('results-view').hidden = true;
  $('search-view').hidden = false;
  if (state.search) fillSearchForm(state.search);
  unregisterResultsTools();
}

function showResultsView() {
  state.view = 'results';
  $('search-view').hidden = true;
  $('results-view').hidden = false;
  buildAirlineFilters();
  renderResults();
  registerResultsTools();
}

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function formatDuration(minutes) {
  return `${Math.floor(minutes / 60)}h ${String(minutes % 60).padStart(2, '0')}m`;
}

function stopsLabel(stops) {
  return stops === 0 ? 'Nonstop' : stops === 1 ? '1 stop' : `${stops} stops`;
}

function renderResults() {
  const { search } = state;
  $('results-title').textContent =
    `${placeName(search.origin)} (${search.origin}) → ${placeName(search.destination)} (${search.destination})`;
  const dates = search.tripType === 'round-trip'
    ? `${search.outboundDate} – ${search.inboundDate}`
    : search.outboundDate;
  const people = search.passengers === 1 ? '1 passenger' : `${search.passengers} passengers`;
  $('results-summary').textContent =
    `${search.tripType === 'round-trip' ? 'Round trip' : 'One way'} · ${dates} · ${people}`;

  const visible = visibleFlights();
  $('result-count').textContent = `Showing ${visible.length} of ${state.flights.length} flights`;
  $('flight-list').replaceChildren(...visible.map(flightCard));
  $('no-flights').hidden = visible.length > 0;
  renderAppliedFilters();
  syncFilterControls();
}

function flightCard(flight) {
  const card = el('li', 'flight-card');
  card.dataset.flightId = flight.id;
  card.dataset.stops = String(flight.stops);
  card.dataset.price = String(flight.price);
  card.dataset.airlineCode = flight.airlineCode;

  const airline = el('div', 'flight-airline');
  airline.append(el('strong', null, flight.airline), el('span', 'muted', ` · ${flight.id}`));

  const times = el('div', 'flight-times');
  times.append(el('strong', null, `${flight.departureTime} → ${flight.arrivalTime}`));
  if (flight.arrivalDayOffset > 0) times.append(el('sup', 'next-day', `+${flight.arrivalDayOffset}`));
  times.append(el('div', 'muted', `${flight.origin} → ${flight.destination}`));

  const duration = el('div', 'flight-duration');
  duration.append(el('span', null, formatDuration(flight.durationMinutes)));
  duration.append(el('div', 'muted', stopsLabel(flight.stops)));

  const price = el('div', 'flight-price');
  price.append(el('strong', null, `$${flight.price.toLocaleString('en-US')}`));
  price.append(el('div', 'muted', state.search.tripType === 'round-trip' ? 'round trip / person' : 'one way / person'));

  card.append(airline, times, duration, price);
  return card;
}

function renderAppliedFilters() {
  const f = state.filters;
  const chips = [];
  const range = ([from, to]) => `${minutesToHHMM(from)}–${minutesToHHMM(to)}`;
  if (f.stops.length) chips.push(`Stops: ${f.stops.map(stopsLabel).join(', ')}`);
  if (f.airlines.length) chips.push(`Airlines: ${f.airlines.join(', ')}`);
  if (f.origins.length) chips.push(`From: ${f.origins.join(', ')}`);
  if (f.destinations.length) chips.push(`To: ${f.destinations.join(', ')}`);
  if (f.minPrice > 0 || f.maxPrice !== null) chips.push(`Price: $${f.minPrice}–${f.maxPrice === null ? 'any' : `$${f.maxPrice}`}`);
  if (f.departureTime[0] > 0 || f.departureTime[1] < 1439) chips.push(`Departs ${range(f.departureTime)}`);
  if (f.arrivalTime[0] > 0 || f.arrivalTime[1] < 1439) chips.push(`Arrives ${range(f.arrivalTime)}`);
  if (f.flightIds.length) chips.push(`Flights: ${f.flightIds.join(', ')}`);
  $('applied-filters').replaceChildren(...chips.map((text) => el('span', 'chip', text)));
}

/** One checkbox per airline present in the current results. */
function buildAirlineFilters() {
  const fieldset = $('filter-airlines');
  const legend = fieldset.querySelector('legend');
  const codes = [...new Set(state.flights.map((f) => f.airlineCode))].sort();
  const rows = codes.map((code) => {
    const label = el('label', 'filter-row');
    const box = document.createElement('input');
    box.type = 'checkbox';
    box.name = 'airlines';
    box.value = code;
    label.append(box, ` ${AIRLINES.find((a) => a.code === code).name}`);
    return label;
  });
  fieldset.replaceChildren(legend, ...rows);
}

/** Make the human filter controls reflect state.filters (also after agent changes). */
function syncFilterControls() {
  for (const box of document.querySelectorAll('#filter-panel input[name="stops"]')) {
    box.checked = state.filters.stops.includes(Number(box.value));
  }
  for (const box of document.querySelectorAll('#filter-panel input[name="airlines"]')) {
    box.checked = state.filters.airlines.includes(box.value);
  }
  $('filter-max-price').value = state.filters.maxPrice === null ? '' : String(state.filters.maxPrice);
}

/** Human changed a filter control: update only the filters the panel controls. */
function onFilterPanelChange() {
  const checkedValues = (name) =>
    [...document.querySelectorAll(`#filter-panel input[name="${name}"]:checked`)].map((box) => box.value);
  const maxPriceText = $('filter-max-price').value.trim();
  const maxPrice = maxPriceText === '' ? null : Number(maxPriceText);
  applyFilters({
    ...state.filters,
    stops: checkedValues('stops').map(Number),
    airlines: checkedValues('airlines'),
    maxPrice: Number.isFinite(maxPrice) ? maxPrice : null,
  });
}

function fillSearchForm(search) {
  for (const key of SEARCH_KEYS) if (search[key] !== undefined) $(key).value = String(search[key]);
  syncReturnDate();
}

/** A one-way trip has no return date: its field is off. */
function syncReturnDate() {
  $('inboundDate').disabled = $('tripType').value === 'one-way';
}

function readSearchForm() {
  const values = {};
  for (const key of SEARCH_KEYS) values[key] = $(key).value.trim();
  values.origin = values.origin.toUpperCase();
  values.destination = values.destination.toUpperCase();
  values.passengers = Number(values.passengers);
  if (values.tripType === 'one-way') delete values.inboundDate;
  return values;
}

let toastTimer = null;
function showToast(message) {
  $('toast').textContent = message;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { $('toast').textContent = ''; }, 3000);
}

function isoDateInDays(days) {
  const date = new Date();
  date.setDate(date.getDate() + days);
  return `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, '0')}-${String(date.getDate()).padStart(2, '0')}`;
}

// ---------------------------------------------------------------------------
// Start-up
// ---------------------------------------------------------------------------

function start() {
  $('outboundDate').value = isoDateInDays(30);
  $('inboundDate').value = isoDateInDays(37);

  $('tripType').addEventListener('change', syncReturnDate);
  $('search-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const search = parseSearch(readSearchForm());
    $('search-error').textContent = search.error ?? '';
    if (!search.error) runSearch(search);
  });
  $('new-search').addEventListener('click', () => {
    history.pushState({ view: 'search' }, '', urlFor(null));
    showSearchView();
  });
  $('filter-panel').addEventListener('change', onFilterPanelChange);
  $('reset-filters').addEventListener('click', () => applyFilters(copyFilters(DEFAULT_FILTERS)));

  // Back/forward between the two views, still within this one document.
  window.addEventListener('popstate', (event) => {
    const entry = event.state;
    if (entry?.view === 'results' && entry.search) {
      state.search = entry.search;
      state.searchId = entry.searchId;
      state.flights = generateFlights(entry.search);
      state.filters = copyFilters(DEFAULT_FILTERS);
      showResultsView();
    } else {
      showSearchView();
    }
  });

  // searchFlights is available in both views, for the whole life of the page.
  registerTool(searchFlightsTool);

  // A complete, valid search in the URL opens the results view directly.
  const params = new URLSearchParams(location.search);
  const fromUrl = REQUIRED_KEYS.every((key) => params.has(key))
    ? parseSearch(Object.fromEntries(SEARCH_KEYS.filter((key) => params.has(key)).map((key) => [key, params.get(key)])))
    : { error: 'no search in URL' };
  if (!fromUrl.error) {
    runSearch(fromUrl, { replaceHistory: true });
  } else {
    history.replaceState({ view: 'search' }, '', location.href);
    showSearchView();
  }
}

if (modelContext) {
  start();
} else {
  // No WebMCP in this browser (and no polyfill): say so, and do nothing else.
  $('webmcp-missing').hidden = false;
  $('search-view').hidden = true;
}
