-- Keep every message received; the current address is the message whose version equals the
-- customer's highest version.
CREATE TABLE IF NOT EXISTS customer_change_log (
    change_id   BIGINT,
    customer_id INTEGER,
    version     INTEGER,
    op          TEXT,
    street      TEXT,
    unit        TEXT,
    city        TEXT,
    postal_code TEXT,
    country     TEXT,
    updated_at  TIMESTAMP
);

INSERT INTO customer_change_log
    (change_id, customer_id, version, op, street, unit, city, postal_code, country, updated_at)
SELECT change_id, customer_id, version, op, street, unit, city, postal_code, country, updated_at
FROM incoming.customer_changes;

DROP TABLE IF EXISTS customer_current_address;

CREATE TABLE customer_current_address AS
SELECT l.customer_id, l.street, l.unit, l.city, l.postal_code, l.country, l.updated_at
FROM customer_change_log AS l
JOIN (
    SELECT customer_id, MAX(version) AS version
    FROM customer_change_log
    GROUP BY customer_id
) AS m
  ON m.customer_id = l.customer_id AND m.version = l.version
WHERE l.op = 'upsert';
