-- Incremental: deltas applied by key. The order numbers counted so far are kept in a registry
-- keyed (indexed) on the number, and day_state keeps each (store, day)'s revenue and orders
-- under one indexed key. A run looks up only the numbers its batch carries, sums the orders not
-- counted before per store and day, adds them to the stored totals of just those days and
-- rewrites just those rows of the target; one transaction, so a retried batch adds nothing
-- twice.
-- DuckDB reads the whole stored side of a join whose other side ends up empty, so the registry
-- and the state hold one sentinel row each that every lookup also asks for, and target rows are
-- deleted only for days known to be stored.
BEGIN TRANSACTION;

-- Created with their sentinel rows, once (the statements do nothing when the tables exist).
CREATE TABLE IF NOT EXISTS loaded_orders AS SELECT -1::BIGINT AS order_id;
CREATE UNIQUE INDEX IF NOT EXISTS loaded_orders_id ON loaded_orders (order_id);

CREATE TABLE IF NOT EXISTS day_state AS
SELECT ''::VARCHAR AS day_key, NULL::INTEGER AS store_id, NULL::DATE AS day,
       NULL::DECIMAL(12,2) AS revenue, NULL::BIGINT AS orders;
CREATE UNIQUE INDEX IF NOT EXISTS day_state_key ON day_state (day_key);

CREATE TABLE IF NOT EXISTS daily_store_revenue (
    store_id INTEGER,
    day      DATE,
    revenue  DECIMAL(12,2),
    orders   BIGINT
);
CREATE INDEX IF NOT EXISTS daily_store_revenue_day ON daily_store_revenue (day);

CREATE OR REPLACE TEMP TABLE known AS
SELECT k.order_id FROM loaded_orders AS k
WHERE k.order_id IN (SELECT order_id FROM incoming.orders UNION ALL SELECT -1);

CREATE OR REPLACE TEMP TABLE fresh AS
SELECT DISTINCT ON (order_id) order_id, store_id, amount, ordered_at
FROM incoming.orders
WHERE order_id NOT IN (SELECT order_id FROM known)
ORDER BY order_id;

INSERT INTO loaded_orders SELECT order_id FROM fresh;

CREATE OR REPLACE TEMP TABLE delta AS
SELECT
    store_id || '|' || CAST(ordered_at AS DATE) AS day_key,
    store_id,
    CAST(ordered_at AS DATE) AS day,
    CAST(coalesce(sum(amount), 0) AS DECIMAL(12,2)) AS revenue,
    count(*) AS orders
FROM fresh
GROUP BY ALL;

CREATE OR REPLACE TEMP TABLE stored AS
SELECT s.* FROM day_state AS s
WHERE s.day_key IN (SELECT day_key FROM delta UNION ALL SELECT '');
DELETE FROM stored WHERE day_key = '';

CREATE OR REPLACE TEMP TABLE updated AS
SELECT d.day_key, d.store_id, d.day,
       CAST(d.revenue + coalesce(s.revenue, 0) AS DECIMAL(12,2)) AS revenue,
       d.orders + coalesce(s.orders, 0) AS orders
FROM delta AS d LEFT JOIN stored AS s USING (day_key);

-- The sentinel goes with the stored rows (never an empty lookup) and comes back.
DELETE FROM day_state
WHERE day_key IN (SELECT day_key FROM stored UNION ALL SELECT '');

INSERT INTO day_state
SELECT * FROM updated UNION ALL SELECT '', NULL, NULL, NULL, NULL;

DELETE FROM daily_store_revenue AS r
USING stored AS s
WHERE r.store_id = s.store_id AND r.day = s.day
  AND r.day IN (SELECT day FROM stored UNION ALL SELECT DATE '0001-01-01');

INSERT INTO daily_store_revenue
SELECT store_id, day, revenue, orders FROM updated;

DROP TABLE updated;
DROP TABLE stored;
DROP TABLE delta;
DROP TABLE fresh;
DROP TABLE known;

COMMIT;
