CREATE TABLE orders (
  id INTEGER PRIMARY KEY,
  customer TEXT NOT NULL,
  region TEXT NOT NULL,
  status TEXT NOT NULL,
  amount_cents INTEGER NOT NULL
);
INSERT INTO orders (id, customer, region, status, amount_cents) VALUES
  (1, 'Acme GmbH', 'eu', 'open', 129900),
  (2, 'Globex', 'us', 'shipped', 45000),
  (3, 'Initech', 'us', 'open', 9900),
  (4, 'Umbrella', 'apac', 'open', 310000),
  (5, 'Hooli', 'us', 'cancelled', 0);
