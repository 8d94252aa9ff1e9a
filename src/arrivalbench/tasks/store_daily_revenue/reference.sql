-- Daily revenue per store, recomputed from the complete log of orders.
SELECT
    CAST(store_id AS INTEGER)                               AS store_id,
    CAST(ordered_at AS DATE)                                AS day,
    CAST(COALESCE(SUM(amount), 0) AS DECIMAL(12,2))         AS revenue,
    CAST(COUNT(*) AS BIGINT)                                AS orders
FROM orders
GROUP BY store_id, CAST(ordered_at AS DATE)
