WITH running AS (
    SELECT
        *,
        sum(quantity) OVER (PARTITION BY warehouse_id, sku ORDER BY moved_at, movement_id
                            ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS level
    FROM stock_movements
)
SELECT
    warehouse_id,
    sku,
    sum(quantity)                          AS on_hand,
    count(*)                               AS movements,
    max(moved_at)                          AS last_movement_at,
    min(moved_at) FILTER (WHERE level <= 0) AS first_stockout_at
FROM running
GROUP BY warehouse_id, sku
