WITH running AS (
  SELECT
    warehouse_id, sku, quantity, moved_at, movement_id,
    SUM(quantity) OVER (
      PARTITION BY warehouse_id, sku
      ORDER BY moved_at, movement_id
      ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    ) AS running_stock
  FROM stock_movements
)
SELECT
  CAST(warehouse_id AS INTEGER) AS warehouse_id,
  CAST(sku AS VARCHAR) AS sku,
  CAST(SUM(quantity) AS BIGINT) AS on_hand,
  CAST(COUNT(*) AS BIGINT) AS movements,
  CAST(MAX(moved_at) AS TIMESTAMP) AS last_movement_at,
  CAST(MIN(moved_at) FILTER (WHERE running_stock <= 0) AS TIMESTAMP) AS first_stockout_at
FROM running
GROUP BY warehouse_id, sku
ORDER BY warehouse_id, sku
