-- One transaction per batch: the events not applied before move each order to the status of
-- its latest event in the batch, fill in the total and placement time when they come, and
-- are counted.
BEGIN TRANSACTION;

CREATE TABLE IF NOT EXISTS applied_events (event_id BIGINT PRIMARY KEY);

CREATE TABLE IF NOT EXISTS orders_current (
    order_id      BIGINT PRIMARY KEY,
    status        VARCHAR,
    order_total   DECIMAL(10,2),
    placed_at     TIMESTAMP,
    last_event_at TIMESTAMP,
    events        BIGINT
);

CREATE TEMP TABLE fresh AS
SELECT DISTINCT event_id, order_id, status_seq, status, order_total, event_at
FROM incoming.order_events
WHERE event_id NOT IN (SELECT event_id FROM applied_events);

INSERT INTO orders_current AS o
SELECT
    order_id,
    (array_agg(status ORDER BY event_at DESC)
        FILTER (WHERE status IS NOT NULL AND event_at IS NOT NULL))[1],
    max(order_total) FILTER (WHERE status = 'placed'),
    min(event_at) FILTER (WHERE status = 'placed'),
    max(event_at),
    count(*)
FROM fresh
GROUP BY order_id
ON CONFLICT (order_id) DO UPDATE SET
    status        = EXCLUDED.status,
    order_total   = COALESCE(EXCLUDED.order_total, o.order_total),
    placed_at     = COALESCE(EXCLUDED.placed_at, o.placed_at),
    last_event_at = EXCLUDED.last_event_at,
    events        = o.events + EXCLUDED.events;

INSERT INTO applied_events SELECT event_id FROM fresh;

COMMIT;
