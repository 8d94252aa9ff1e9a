-- Stock that never goes below 0 is the running sum of the signed quantities minus the lowest
-- the running sum has reached (when that is below 0): the units no shipment could take.
SELECT
    movement_id, sku, movement_type, quantity, moved_at,
    CAST(balance_after - coalesce(lag(balance_after) OVER w, 0) - delta AS INTEGER) AS short_qty,
    balance_after
FROM (
    SELECT *, CAST(running - least(lowest, 0) AS BIGINT) AS balance_after
    FROM (
        SELECT *, min(running) OVER w AS lowest
        FROM (
            SELECT *, sum(delta) OVER w AS running
            FROM (
                SELECT movement_id, sku, movement_type, quantity, moved_at,
                       CASE WHEN movement_type = 'shipment' THEN -quantity ELSE quantity END
                           AS delta
                FROM stock_movements
            ) AS signed
            WINDOW w AS (PARTITION BY sku ORDER BY moved_at, movement_id
                         ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
        ) AS summed
        WINDOW w AS (PARTITION BY sku ORDER BY moved_at, movement_id
                     ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
    ) AS floored
) AS balanced
WINDOW w AS (PARTITION BY sku ORDER BY moved_at, movement_id)
