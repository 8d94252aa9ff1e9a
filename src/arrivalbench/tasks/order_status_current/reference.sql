SELECT
    order_id,
    arg_max(status, status_seq)                          AS status,
    max(order_total) FILTER (WHERE status = 'placed')    AS order_total,
    min(event_at) FILTER (WHERE status = 'placed')       AS placed_at,
    arg_max(event_at, status_seq)                        AS last_event_at,
    count(*)                                             AS events
FROM order_events
GROUP BY order_id
