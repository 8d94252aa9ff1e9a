-- Keep a raw copy of every message (same columns as the feed), each message id once, and
-- rebuild the current addresses from it.
CREATE TABLE IF NOT EXISTS customer_changes_raw AS
SELECT * FROM incoming.customer_changes LIMIT 0;

INSERT INTO customer_changes_raw
SELECT DISTINCT *
FROM incoming.customer_changes
WHERE change_id NOT IN (SELECT change_id FROM customer_changes_raw);

DROP TABLE IF EXISTS customer_current_address;

CREATE TABLE customer_current_address AS
SELECT customer_id, street, unit, city, postal_code, country, updated_at
FROM (
    SELECT r.*, row_number() OVER (PARTITION BY customer_id ORDER BY version DESC NULLS LAST) AS rn
    FROM customer_changes_raw AS r
) AS latest
WHERE rn = 1 AND op = 'upsert';
