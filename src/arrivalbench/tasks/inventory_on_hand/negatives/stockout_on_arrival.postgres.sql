-- One transaction per batch: the movements not booked before are added to each bin's stock;
-- the first stockout is recorded when a batch's running stock, continuing from the stored
-- stock, reaches 0 or less, and is kept once recorded.
BEGIN TRANSACTION;

CREATE TABLE IF NOT EXISTS booked_movements (movement_id BIGINT PRIMARY KEY);

CREATE TABLE IF NOT EXISTS inventory_on_hand (
    warehouse_id      INTEGER,
    sku               TEXT,
    on_hand           BIGINT,
    movements         BIGINT,
    last_movement_at  TIMESTAMP,
    first_stockout_at TIMESTAMP,
    PRIMARY KEY (warehouse_id, sku)
);

CREATE TEMP TABLE fresh AS
SELECT DISTINCT movement_id, warehouse_id, sku, quantity, moved_at
FROM incoming.stock_movements
WHERE movement_id NOT IN (SELECT movement_id FROM booked_movements);

INSERT INTO inventory_on_hand AS i
WITH running AS (
    SELECT
        f.*,
        COALESCE(s.on_hand, 0) + sum(f.quantity) OVER (
            PARTITION BY f.warehouse_id, f.sku ORDER BY f.moved_at, f.movement_id
            ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS level
    FROM fresh AS f
    LEFT JOIN inventory_on_hand AS s USING (warehouse_id, sku)
)
SELECT
    warehouse_id,
    sku,
    sum(quantity),
    count(*),
    max(moved_at),
    min(moved_at) FILTER (WHERE level <= 0)
FROM running
GROUP BY warehouse_id, sku
ON CONFLICT (warehouse_id, sku) DO UPDATE SET
    on_hand           = i.on_hand + EXCLUDED.on_hand,
    movements         = i.movements + EXCLUDED.movements,
    last_movement_at  = greatest(i.last_movement_at, EXCLUDED.last_movement_at),
    first_stockout_at = COALESCE(i.first_stockout_at, EXCLUDED.first_stockout_at);

INSERT INTO booked_movements SELECT movement_id FROM fresh;

COMMIT;
