-- The ticket's rules applied movement by movement: each SKU's movements are numbered in time
-- (then id) order and the stock is carried from one to the next.
WITH RECURSIVE steps AS (
    SELECT movement_id, sku, movement_type, quantity, moved_at,
           row_number() OVER (PARTITION BY sku ORDER BY moved_at, movement_id) AS step
    FROM stock_movements
),
carried AS (
    SELECT s.sku, s.step, s.movement_id,
           CAST(CASE WHEN s.movement_type = 'shipment' AND s.quantity > 0
                     THEN s.quantity ELSE 0 END AS BIGINT) AS short_qty,
           CAST(CASE WHEN s.movement_type = 'shipment' THEN 0 ELSE s.quantity END AS BIGINT)
               AS stock
    FROM steps AS s
    WHERE s.step = 1
    UNION ALL
    SELECT s.sku, s.step, s.movement_id,
           CAST(CASE WHEN s.movement_type = 'shipment' AND s.quantity > c.stock
                     THEN s.quantity - c.stock ELSE 0 END AS BIGINT),
           CAST(CASE WHEN s.movement_type <> 'shipment' THEN c.stock + s.quantity
                     WHEN s.quantity > c.stock THEN 0
                     ELSE c.stock - s.quantity END AS BIGINT)
    FROM carried AS c
    JOIN steps AS s ON s.sku = c.sku AND s.step = c.step + 1
)
SELECT
    CAST(s.movement_id AS BIGINT) AS movement_id,
    CAST(s.sku AS VARCHAR) AS sku,
    CAST(s.movement_type AS VARCHAR) AS movement_type,
    CAST(s.quantity AS INTEGER) AS quantity,
    CAST(s.moved_at AS TIMESTAMP) AS moved_at,
    CAST(c.short_qty AS INTEGER) AS short_qty,
    CAST(c.stock AS BIGINT) AS balance_after
FROM steps AS s
JOIN carried AS c ON c.sku = s.sku AND c.step = s.step
