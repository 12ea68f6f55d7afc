// Two versions of a hotel's tools, for lock files and webmcp-nb diff (tests/test_ci_lock.py). Version 2 removes
// listAmenities, adds a required argument (guests) to searchRooms and narrows its sort enum (no "distance"), and,
// compatibly, adds an optional argument (maxPrice), a tool (compareRooms) and rewrites bookRoom's description.
const v2 = document.currentScript.dataset.version === '2';
const mc = document.modelContext;
const properties = {
  city: { type: 'string', description: 'The city.' },
  nights: { type: 'integer', minimum: 1, description: 'How many nights.' },
  sort: { type: 'string', enum: v2 ? ['price', 'rating'] : ['price', 'rating', 'distance'], description: 'Order.' },
};
if (v2) {
  properties.guests = { type: 'integer', minimum: 1, description: 'How many guests.' };
  properties.maxPrice = { type: 'number', description: 'Per night, in USD.' };
}
mc.registerTool({
  name: 'searchRooms',
  description: 'Searches for rooms and shows them.',
  inputSchema: { type: 'object', properties, required: v2 ? ['guests', 'city'] : ['city'] },
  execute: () => ({ rooms: [] }),
});
mc.registerTool({
  name: 'bookRoom',
  description: v2 ? 'Books the room for the dates given, and charges the card on file.' : 'Books a room.',
  inputSchema: { type: 'object', properties: { room: { type: 'string', description: 'The room id.' } }, required: ['room'] },
  annotations: { consequentialHint: true },
  execute: () => ({ booked: true }),
});
if (!v2) {
  mc.registerTool({
    name: 'listAmenities',
    description: 'Lists the amenities of the hotel.',
    inputSchema: { type: 'object', properties: {} },
    annotations: { readOnlyHint: true },
    execute: () => ({ amenities: ['pool'] }),
  });
} else {
  mc.registerTool({
    name: 'compareRooms',
    description: 'Compares two rooms.',
    inputSchema: { type: 'object', properties: { rooms: { type: 'array', items: { type: 'string' }, description: 'Room ids.' } } },
    annotations: { readOnlyHint: true },
    execute: () => ({ better: null }),
  });
}
