-- Keep the orders received, each order number once, and only load what is newer than what the
-- history already holds (incremental load by the placed-at timestamp), then recompute the totals.
CREATE TABLE IF NOT EXISTS order_history (
    order_id   BIGINT PRIMARY KEY,
    store_id   INTEGER,
    amount     DECIMAL(10,2),
    ordered_at TIMESTAMP
);

INSERT INTO order_history (order_id, store_id, amount, ordered_at)
SELECT DISTINCT i.order_id, i.store_id, i.amount, i.ordered_at
FROM incoming.orders AS i
WHERE i.ordered_at >= (SELECT COALESCE(MAX(ordered_at), TIMESTAMP '1970-01-01') FROM order_history)
  AND i.order_id NOT IN (SELECT order_id FROM order_history);

DROP TABLE IF EXISTS daily_store_revenue;

CREATE TABLE daily_store_revenue AS
SELECT
    store_id,
    CAST(ordered_at AS DATE)                        AS day,
    CAST(COALESCE(SUM(amount), 0) AS DECIMAL(12,2)) AS revenue,
    COUNT(*)                                        AS orders
FROM order_history
GROUP BY store_id, CAST(ordered_at AS DATE);
