-- Land every delivered movement; recompute the stock table from the landing table on every
-- run, with the running stock as a window sum.
CREATE TABLE IF NOT EXISTS movements_landing (
    movement_id   BIGINT,
    warehouse_id  INTEGER,
    sku           TEXT,
    movement_type TEXT,
    quantity      INTEGER,
    moved_at      TIMESTAMP
);

INSERT INTO movements_landing
SELECT movement_id, warehouse_id, sku, movement_type, quantity, moved_at
FROM incoming.stock_movements;

DROP TABLE IF EXISTS inventory_on_hand;

CREATE TABLE inventory_on_hand AS
WITH movements AS (
    SELECT * FROM movements_landing
),
running AS (
    SELECT
        *,
        sum(quantity) OVER (PARTITION BY warehouse_id, sku ORDER BY moved_at, movement_id
                            ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS level
    FROM movements
)
SELECT
    warehouse_id,
    sku,
    sum(quantity)                           AS on_hand,
    count(*)                                AS movements,
    max(moved_at)                           AS last_movement_at,
    min(moved_at) FILTER (WHERE level <= 0) AS first_stockout_at
FROM running
GROUP BY warehouse_id, sku;
