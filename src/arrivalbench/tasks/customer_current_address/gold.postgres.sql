-- Versioned upsert: customer_state keeps, per customer, the message of the highest version seen
-- so far (including account closures, so that an older address can never bring a closed
-- account back). A message replaces the stored one only if its version is higher.
CREATE TABLE IF NOT EXISTS customer_state (
    customer_id INTEGER PRIMARY KEY,
    version     INTEGER   NOT NULL,
    op          TEXT   NOT NULL,
    street      TEXT,
    unit        TEXT,
    city        TEXT,
    postal_code TEXT,
    country     TEXT,
    updated_at  TIMESTAMP
);

INSERT INTO customer_state AS s
    (customer_id, version, op, street, unit, city, postal_code, country, updated_at)
SELECT customer_id, version, op, street, unit, city, postal_code, country, updated_at
FROM (SELECT *, row_number() OVER (PARTITION BY customer_id
                                   ORDER BY version DESC NULLS LAST) AS rn
      FROM incoming.customer_changes) AS ranked
WHERE rn = 1
ON CONFLICT (customer_id) DO UPDATE SET
    version     = EXCLUDED.version,
    op          = EXCLUDED.op,
    street      = EXCLUDED.street,
    unit        = EXCLUDED.unit,
    city        = EXCLUDED.city,
    postal_code = EXCLUDED.postal_code,
    country     = EXCLUDED.country,
    updated_at  = EXCLUDED.updated_at
WHERE EXCLUDED.version > s.version;

DROP TABLE IF EXISTS customer_current_address;

CREATE TABLE customer_current_address AS
SELECT customer_id, street, unit, city, postal_code, country, updated_at
FROM customer_state
WHERE op = 'upsert';
