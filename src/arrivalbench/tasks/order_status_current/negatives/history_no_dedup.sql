-- Keep every event delivered, then rebuild the order table from the history.
CREATE TABLE IF NOT EXISTS order_event_history (
    event_id    BIGINT,
    order_id    BIGINT,
    status_seq  INTEGER,
    status      VARCHAR,
    order_total DECIMAL(10,2),
    event_at    TIMESTAMP
);

INSERT INTO order_event_history
SELECT event_id, order_id, status_seq, status, order_total, event_at
FROM incoming.order_events;

CREATE OR REPLACE TABLE orders_current AS
SELECT
    order_id,
    arg_max(status, status_seq)                          AS status,
    max(order_total) FILTER (WHERE status = 'placed')    AS order_total,
    min(event_at) FILTER (WHERE status = 'placed')       AS placed_at,
    arg_max(event_at, status_seq)                        AS last_event_at,
    count(*)                                             AS events
FROM order_event_history
GROUP BY order_id;
