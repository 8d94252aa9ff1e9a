-- Apply each message once, in the order the messages reach us: a message id that was applied
-- before is skipped; within one delivery the latest save of a customer wins.
CREATE TABLE IF NOT EXISTS applied_changes (
    change_id BIGINT PRIMARY KEY
);

CREATE TABLE IF NOT EXISTS customer_current_address (
    customer_id INTEGER PRIMARY KEY,
    street      TEXT,
    unit        TEXT,
    city        TEXT,
    postal_code TEXT,
    country     TEXT,
    updated_at  TIMESTAMP
);

CREATE TEMP TABLE batch_latest AS
SELECT customer_id, op, street, unit, city, postal_code, country, updated_at
FROM (SELECT c.*, row_number() OVER (PARTITION BY customer_id
                                     ORDER BY updated_at DESC NULLS LAST) AS rn
      FROM incoming.customer_changes AS c
      WHERE c.change_id NOT IN (SELECT change_id FROM applied_changes)) AS ranked
WHERE rn = 1;

DELETE FROM customer_current_address
WHERE customer_id IN (SELECT customer_id FROM batch_latest WHERE op = 'delete');

INSERT INTO customer_current_address
    (customer_id, street, unit, city, postal_code, country, updated_at)
SELECT customer_id, street, unit, city, postal_code, country, updated_at
FROM batch_latest
WHERE op = 'upsert'
ON CONFLICT (customer_id) DO UPDATE SET
    street      = EXCLUDED.street,
    unit        = EXCLUDED.unit,
    city        = EXCLUDED.city,
    postal_code = EXCLUDED.postal_code,
    country     = EXCLUDED.country,
    updated_at  = EXCLUDED.updated_at;

INSERT INTO applied_changes (change_id)
SELECT DISTINCT change_id FROM incoming.customer_changes
ON CONFLICT DO NOTHING;
