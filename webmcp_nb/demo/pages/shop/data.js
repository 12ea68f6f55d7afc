// Product catalog for the shop demo (prices in USD, rating out of 5).
export const PRODUCTS = [
  { id: 'p01', name: 'Wireless Headphones', category: 'Electronics', price: 89.99, rating: 4.5, stock: 12 },
  { id: 'p02', name: 'USB-C Charger 65W', category: 'Electronics', price: 34.5, rating: 4.7, stock: 30 },
  { id: 'p03', name: 'Mechanical Keyboard', category: 'Electronics', price: 119.0, rating: 4.6, stock: 5 },
  { id: 'p04', name: 'Bluetooth Speaker', category: 'Electronics', price: 59.95, rating: 4.2, stock: 0 },
  { id: 'p05', name: 'Chef\'s Knife', category: 'Kitchen', price: 45.0, rating: 4.8, stock: 9 },
  { id: 'p06', name: 'French Press', category: 'Kitchen', price: 27.99, rating: 4.4, stock: 14 },
  { id: 'p07', name: 'Cast Iron Skillet', category: 'Kitchen', price: 39.9, rating: 4.9, stock: 7 },
  { id: 'p08', name: 'Bamboo Cutting Board', category: 'Kitchen', price: 19.99, rating: 4.1, stock: 25 },
  { id: 'p09', name: 'The Pragmatic Programmer', category: 'Books', price: 42.0, rating: 4.8, stock: 6 },
  { id: 'p10', name: 'Field Guide to Birds', category: 'Books', price: 24.95, rating: 4.3, stock: 3 },
  { id: 'p11', name: 'Cooking for Engineers', category: 'Books', price: 29.0, rating: 3.9, stock: 11 },
  { id: 'p12', name: 'Camping Tent (2 person)', category: 'Outdoor', price: 149.0, rating: 4.4, stock: 4 },
  { id: 'p13', name: 'Insulated Water Bottle', category: 'Outdoor', price: 22.5, rating: 4.6, stock: 40 },
  { id: 'p14', name: 'Trekking Poles', category: 'Outdoor', price: 64.0, rating: 4.0, stock: 8 },
  { id: 'p15', name: 'Headlamp', category: 'Outdoor', price: 18.75, rating: 4.5, stock: 2 },
];
