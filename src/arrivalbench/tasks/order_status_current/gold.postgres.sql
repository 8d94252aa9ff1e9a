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
SELECT DISTINCT ON (e.event_id) e.event_id, e.order_id, e.status_seq, e.status, e.order_total,
       e.event_at
FROM incoming.order_events AS e
WHERE NOT EXISTS (SELECT 1 FROM order_event_history AS h WHERE h.event_id = e.event_id)
ORDER BY e.event_id, e.event_at;

DROP TABLE IF EXISTS orders_current;

-- (array_agg(x ORDER BY v DESC) FILTER (WHERE x and v are not null))[1] is DuckDB's
-- arg_max(x, v): the x of the row with the highest v, rows with a null x or v ignored.
CREATE TABLE orders_current AS
SELECT
    order_id,
    (array_agg(status ORDER BY status_seq DESC)
        FILTER (WHERE status IS NOT NULL AND status_seq IS NOT NULL))[1]   AS status,
    max(order_total) FILTER (WHERE status = 'placed')                      AS order_total,
    min(event_at) FILTER (WHERE status = 'placed')                         AS placed_at,
    (array_agg(event_at ORDER BY status_seq DESC)
        FILTER (WHERE event_at IS NOT NULL AND status_seq IS NOT NULL))[1] AS last_event_at,
    count(*)                                                               AS events
FROM order_event_history
GROUP BY order_id;
