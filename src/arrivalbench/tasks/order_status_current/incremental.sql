-- Incremental: the event history is keyed on the event id and indexed on the order id. A run
-- looks up only the stored ids its batch carries, stores the events not seen before, reads the
-- events of the orders those belong to (index scans) and replaces just those orders' rows; one
-- transaction, so a retried batch changes nothing twice.
-- DuckDB reads the whole stored side of a join whose other side ends up empty, so: the history
-- holds one sentinel row (event_id -1, no order) that every id lookup also asks for, and the
-- orders' rows are deleted only for orders known (from their earlier events) to have one.
BEGIN TRANSACTION;

-- Created with its sentinel row, once (the statement does nothing when the table exists).
CREATE TABLE IF NOT EXISTS order_event_history AS
SELECT -1::BIGINT AS event_id, NULL::BIGINT AS order_id, NULL::INTEGER AS status_seq,
       NULL::VARCHAR AS status, NULL::DECIMAL(10,2) AS order_total, NULL::TIMESTAMP AS event_at;
CREATE UNIQUE INDEX IF NOT EXISTS order_event_history_id ON order_event_history (event_id);
CREATE INDEX IF NOT EXISTS order_event_history_order ON order_event_history (order_id);

CREATE TABLE IF NOT EXISTS orders_current (
    order_id      BIGINT PRIMARY KEY,
    status        VARCHAR,
    order_total   DECIMAL(10,2),
    placed_at     TIMESTAMP,
    last_event_at TIMESTAMP,
    events        BIGINT
);

CREATE OR REPLACE TEMP TABLE known AS
SELECT h.event_id FROM order_event_history AS h
WHERE h.event_id IN (SELECT event_id FROM incoming.order_events UNION ALL SELECT -1);

CREATE OR REPLACE TEMP TABLE fresh AS
SELECT event_id, order_id, status_seq, status, order_total, event_at
FROM incoming.order_events
WHERE event_id NOT IN (SELECT event_id FROM known)
QUALIFY row_number() OVER (PARTITION BY event_id ORDER BY event_at) = 1;

INSERT INTO order_event_history SELECT * FROM fresh;

CREATE OR REPLACE TEMP TABLE touched AS
SELECT h.* FROM order_event_history AS h
WHERE h.order_id IN (SELECT order_id FROM fresh UNION ALL SELECT -1);

-- Materialized, so that an empty set is known when the DELETE is planned.
CREATE OR REPLACE TEMP TABLE stored AS
SELECT DISTINCT order_id FROM touched WHERE event_id NOT IN (SELECT event_id FROM fresh);

DELETE FROM orders_current
WHERE order_id IN (SELECT order_id FROM stored UNION ALL SELECT -1);

INSERT INTO orders_current
SELECT
    order_id,
    arg_max(status, status_seq),
    max(order_total) FILTER (WHERE status = 'placed'),
    min(event_at) FILTER (WHERE status = 'placed'),
    arg_max(event_at, status_seq),
    count(*)
FROM touched
GROUP BY order_id;

DROP TABLE stored;
DROP TABLE touched;
DROP TABLE fresh;
DROP TABLE known;

COMMIT;
