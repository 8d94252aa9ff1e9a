-- Incremental: customer_state keeps each customer's highest version seen so far (closed accounts
-- included, so that an older message can never bring one back). A run reads the stored state of
-- the customers its batch mentions; only the customers whose version moves forward are rewritten,
-- in the state and in the target, in one transaction (a retried batch finds the versions
-- already applied and changes nothing). A repeated message carries a version already seen.
CREATE TABLE IF NOT EXISTS customer_state (
    customer_id  INTEGER PRIMARY KEY,
    version      INTEGER,
    op           VARCHAR,
    street       VARCHAR,
    unit         VARCHAR,
    city         VARCHAR,
    postal_code  VARCHAR,
    country      VARCHAR,
    updated_at   TIMESTAMP
);

CREATE TABLE IF NOT EXISTS customer_current_address (
    customer_id  INTEGER PRIMARY KEY,
    street       VARCHAR,
    unit         VARCHAR,
    city         VARCHAR,
    postal_code  VARCHAR,
    country      VARCHAR,
    updated_at   TIMESTAMP
);

CREATE OR REPLACE TEMP TABLE newest AS
SELECT customer_id, version, op, street, unit, city, postal_code, country, updated_at
FROM incoming.customer_changes
QUALIFY row_number() OVER (PARTITION BY customer_id ORDER BY version DESC) = 1;

-- The key lists the lookups below join against are never empty (an empty one looks up 0):
-- DuckDB pushes the keys of a join's small side into the scan of the stored table, but from an
-- empty side it pushes nothing and reads the table whole. The deletes also require the key to
-- be a winner's, so that a real key 0 is never deleted by mistake.
CREATE OR REPLACE TEMP TABLE batch_keys AS
SELECT customer_id FROM newest UNION ALL SELECT coalesce(min(customer_id), 0) FROM newest;

CREATE OR REPLACE TEMP TABLE stored AS
SELECT s.customer_id, s.version FROM customer_state AS s WHERE s.customer_id IN (SELECT customer_id FROM batch_keys);

CREATE OR REPLACE TEMP TABLE winners AS
SELECT n.* FROM newest AS n LEFT JOIN stored AS s USING (customer_id)
WHERE s.version IS NULL OR n.version > s.version;

CREATE OR REPLACE TEMP TABLE winner_keys AS
SELECT customer_id FROM winners UNION ALL SELECT coalesce(min(customer_id), 0) FROM winners;

BEGIN TRANSACTION;

DELETE FROM customer_state
WHERE customer_id IN (SELECT customer_id FROM winner_keys) AND customer_id IN (SELECT customer_id FROM winners);

INSERT INTO customer_state SELECT customer_id, version, op, street, unit, city, postal_code, country, updated_at FROM winners;

DELETE FROM customer_current_address
WHERE customer_id IN (SELECT customer_id FROM winner_keys) AND customer_id IN (SELECT customer_id FROM winners);

INSERT INTO customer_current_address
SELECT customer_id, street, unit, city, postal_code, country, updated_at
FROM winners
WHERE op = 'upsert';

COMMIT;
