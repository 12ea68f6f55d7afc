// Fake, deterministic flight data for the flights demo.
//
// Nothing in this file talks to WebMCP. generateFlights() turns a search into
// 12-20 flights using a PRNG seeded with origin + destination + outbound date,
// so the same search always gives the same flights (handy for tests).

export const AIRLINES = [
  { code: 'UA', name: 'United Airlines', priceFactor: 1.05 },
  { code: 'DL', name: 'Delta Air Lines', priceFactor: 1.08 },
  { code: 'AA', name: 'American Airlines', priceFactor: 1.0 },
  { code: 'BA', name: 'British Airways', priceFactor: 1.12 },
  { code: 'VS', name: 'Virgin Atlantic', priceFactor: 1.1 },
  { code: 'LH', name: 'Lufthansa', priceFactor: 1.06 },
  { code: 'AF', name: 'Air France', priceFactor: 1.04 },
  { code: 'KL', name: 'KLM', priceFactor: 0.98 },
  { code: 'B6', name: 'JetBlue', priceFactor: 0.86 },
  { code: 'EI', name: 'Aer Lingus', priceFactor: 0.9 },
];

// City codes that stand for several airports (as in real IATA usage).
export const METRO_AREAS = {
  LON: { name: 'London', airports: ['LHR', 'LGW', 'STN'] },
  NYC: { name: 'New York', airports: ['JFK', 'EWR', 'LGA'] },
  PAR: { name: 'Paris', airports: ['CDG', 'ORY'] },
  TYO: { name: 'Tokyo', airports: ['HND', 'NRT'] },
  CHI: { name: 'Chicago', airports: ['ORD', 'MDW'] },
  WAS: { name: 'Washington', airports: ['IAD', 'DCA'] },
};

// Known airports: name and rough position (for realistic flight durations).
// Any other 3-letter code still works; its duration comes from a hash instead.
export const AIRPORTS = {
  LHR: { name: 'London Heathrow', lat: 51.5, lon: -0.5 },
  LGW: { name: 'London Gatwick', lat: 51.2, lon: -0.2 },
  STN: { name: 'London Stansted', lat: 51.9, lon: 0.2 },
  JFK: { name: 'New York JFK', lat: 40.6, lon: -73.8 },
  EWR: { name: 'Newark', lat: 40.7, lon: -74.2 },
  LGA: { name: 'New York LaGuardia', lat: 40.8, lon: -73.9 },
  CDG: { name: 'Paris Charles de Gaulle', lat: 49.0, lon: 2.6 },
  ORY: { name: 'Paris Orly', lat: 48.7, lon: 2.4 },
  HND: { name: 'Tokyo Haneda', lat: 35.6, lon: 139.8 },
  NRT: { name: 'Tokyo Narita', lat: 35.8, lon: 140.4 },
  ORD: { name: "Chicago O'Hare", lat: 42.0, lon: -87.9 },
  MDW: { name: 'Chicago Midway', lat: 41.8, lon: -87.8 },
  IAD: { name: 'Washington Dulles', lat: 38.9, lon: -77.5 },
  DCA: { name: 'Washington National', lat: 38.9, lon: -77.0 },
  SFO: { name: 'San Francisco', lat: 37.6, lon: -122.4 },
  LAX: { name: 'Los Angeles', lat: 33.9, lon: -118.4 },
  SEA: { name: 'Seattle', lat: 47.4, lon: -122.3 },
  BOS: { name: 'Boston', lat: 42.4, lon: -71.0 },
  MIA: { name: 'Miami', lat: 25.8, lon: -80.3 },
  AMS: { name: 'Amsterdam', lat: 52.3, lon: 4.8 },
  FRA: { name: 'Frankfurt', lat: 50.0, lon: 8.6 },
  MUC: { name: 'Munich', lat: 48.4, lon: 11.8 },
  DUB: { name: 'Dublin', lat: 53.4, lon: -6.3 },
  MAD: { name: 'Madrid', lat: 40.5, lon: -3.6 },
  ZRH: { name: 'Zurich', lat: 47.5, lon: 8.5 },
  DXB: { name: 'Dubai', lat: 25.3, lon: 55.4 },
};

/** Human-readable name for an airport or city code ("LHR" -> "London Heathrow"). */
export function placeName(code) {
  return METRO_AREAS[code]?.name ?? AIRPORTS[code]?.name ?? code;
}

/** The airports a code covers: a city code expands, an airport code is itself. */
function airportsFor(code) {
  return METRO_AREAS[code]?.airports ?? [code];
}

/**
 * Nonstop block time in minutes: from the great-circle distance when both ends are
 * known airports, otherwise 70-670 minutes from a hash of the (sorted) pair.
 */
function routeMinutesFor(origin, destination) {
  const a = AIRPORTS[airportsFor(origin)[0]];
  const b = AIRPORTS[airportsFor(destination)[0]];
  if (!a || !b) return 70 + (hashString([origin, destination].sort().join('-')) % 600);
  const rad = Math.PI / 180;
  const cosAngle = Math.sin(a.lat * rad) * Math.sin(b.lat * rad) +
    Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.cos((a.lon - b.lon) * rad);
  const km = 6371 * Math.acos(Math.min(1, Math.max(-1, cosAngle)));
  return Math.round(40 + km / 13.5); // ~810 km/h plus taxi and climb
}

/** "HH:MM" for a number of minutes after midnight. */
export function minutesToHHMM(minutes) {
  const h = Math.floor(minutes / 60) % 24;
  const m = minutes % 60;
  return `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`;
}

/** Minutes after midnight for an "HH:MM" string. */
export function hhmmToMinutes(text) {
  const [h, m] = text.split(':').map(Number);
  return h * 60 + m;
}

// FNV-1a string hash -> 32-bit seed.
function hashString(text) {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

// mulberry32: a tiny seeded PRNG returning floats in [0, 1).
function mulberry32(seed) {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Flights for a search {origin, destination, tripType, outboundDate, ...}.
 * Prices are per passenger, in USD; round-trip prices include the return.
 */
export function generateFlights({ origin, destination, tripType, outboundDate }) {
  const random = mulberry32(hashString(`${origin}|${destination}|${outboundDate}`));
  const int = (min, max) => min + Math.floor(random() * (max - min + 1));
  const pick = (items) => items[Math.floor(random() * items.length)];

  const routeMinutes = routeMinutesFor(origin, destination);

  // Each route is served by 4-6 of the airlines.
  const airlines = [...AIRLINES]
    .map((airline) => ({ airline, order: random() }))
    .sort((a, b) => a.order - b.order)
    .slice(0, int(4, 6))
    .map((entry) => entry.airline);

  const origins = airportsFor(origin);
  const destinations = airportsFor(destination);
  const count = int(12, 20);
  const usedIds = new Set();
  const flights = [];

  for (let i = 0; i < count; i++) {
    // Every chosen airline gets at least one flight; the rest are random.
    const airline = i < airlines.length ? airlines[i] : pick(airlines);
    // The first three flights cover 0, 1 and 2 stops, so every search has all three.
    const stops = i < 3 ? i : pick([0, 0, 0, 1, 1, 1, 2, 2]);
    const durationMinutes = routeMinutes + stops * int(55, 170) + int(-10, 30);
    const departure = int(60, 282) * 5; // 05:00 .. 23:30, 5-minute steps
    const arrival = departure + durationMinutes;

    const stopFactor = [1.25, 1.0, 0.82][stops];
    let price = (40 + routeMinutes * 0.42) * stopFactor * airline.priceFactor * (0.85 + random() * 0.3);
    if (tripType === 'round-trip') price *= 1.8;

    let id;
    do {
      id = `${airline.code}${int(100, 2999)}`;
    } while (usedIds.has(id));
    usedIds.add(id);

    flights.push({
      id,
      airline: airline.name,
      airlineCode: airline.code,
      origin: pick(origins),
      destination: pick(destinations),
      departureTime: minutesToHHMM(departure),
      arrivalTime: minutesToHHMM(arrival % 1440),
      arrivalDayOffset: Math.floor(arrival / 1440),
      durationMinutes,
      stops,
      price: Math.round(price),
      currency: 'USD',
    });
  }

  flights.sort((a, b) => a.departureTime.localeCompare(b.departureTime) || a.price - b.price);
  return flights;
}
