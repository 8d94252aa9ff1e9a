-- Stage the batch's events that the history does not hold yet (anti-join on the event id),
-- once each, then rebuild the order table from the history.
CREATE TABLE IF NOT EXISTS order_event_history (
    event_id    BIGINT,
    order_id    BIGINT,
    status_seq  INTEGER,
    status      VARCHAR,
    order_total DECIMAL(10,2),
    event_at    TIMESTAMP
);

INSERT INTO order_event_history
SELECT e.event_id, e.order_id, e.status_seq, e.status, e.order_total, e.event_at
FROM incoming.order_events AS e
WHERE NOT EXISTS (SELECT 1 FROM order_event_history AS h WHERE h.event_id = e.event_id)
QUALIFY row_number() OVER (PARTITION BY e.event_id ORDER BY e.event_at) = 1;

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
