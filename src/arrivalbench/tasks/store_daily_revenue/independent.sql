SELECT
  CAST(store_id AS INTEGER) AS store_id,
  CAST(CAST(ordered_at AS DATE) AS DATE) AS day,
  CAST(COALESCE(SUM(amount), 0) AS DECIMAL(12,2)) AS revenue,
  CAST(COUNT(*) AS BIGINT) AS orders
FROM orders
GROUP BY store_id, CAST(ordered_at AS DATE)
ORDER BY store_id, day
