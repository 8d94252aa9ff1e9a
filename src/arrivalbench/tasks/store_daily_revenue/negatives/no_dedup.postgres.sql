-- Keep every order received, recompute the daily totals from them.
CREATE TABLE IF NOT EXISTS order_history (
    order_id   BIGINT,
    store_id   INTEGER,
    amount     DECIMAL(10,2),
    ordered_at TIMESTAMP
);

INSERT INTO order_history (order_id, store_id, amount, ordered_at)
SELECT order_id, store_id, amount, ordered_at
FROM incoming.orders;

DROP TABLE IF EXISTS daily_store_revenue;

CREATE TABLE daily_store_revenue AS
SELECT
    store_id,
    CAST(ordered_at AS DATE)                        AS day,
    CAST(COALESCE(SUM(amount), 0) AS DECIMAL(12,2)) AS revenue,
    COUNT(*)                                        AS orders
FROM order_history
GROUP BY store_id, CAST(ordered_at AS DATE);
