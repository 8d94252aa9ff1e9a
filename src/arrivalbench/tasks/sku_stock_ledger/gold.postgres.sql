-- Every delivered movement goes to movements_landing as it comes; the ledger is then recomputed
-- from the landing table, one movement per id: the stock is the running sum of the signed
-- quantities minus the lowest that sum has reached below 0 (the units no shipment could take).
CREATE TABLE IF NOT EXISTS movements_landing (
    movement_id   BIGINT,
    sku           VARCHAR,
    movement_type VARCHAR,
    quantity      INTEGER,
    moved_at      TIMESTAMP
);

INSERT INTO movements_landing
SELECT movement_id, sku, movement_type, quantity, moved_at FROM incoming.stock_movements;

DROP TABLE IF EXISTS sku_stock_ledger;

CREATE TABLE sku_stock_ledger AS
WITH movements AS (
    SELECT DISTINCT ON (movement_id) movement_id, sku, movement_type, quantity, moved_at,
           CASE WHEN movement_type = 'shipment' THEN -quantity ELSE quantity END AS delta
    FROM movements_landing
    ORDER BY movement_id
),
summed AS (
    SELECT *, sum(delta) OVER (PARTITION BY sku ORDER BY moved_at, movement_id
                               ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running
    FROM movements
),
floored AS (
    SELECT *, CAST(running - least(min(running) OVER (
                       PARTITION BY sku ORDER BY moved_at, movement_id
                       ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW), 0) AS BIGINT)
                  AS balance_after
    FROM summed
)
SELECT
    movement_id, sku, movement_type, quantity, moved_at,
    CAST(balance_after - coalesce(lag(balance_after) OVER (
             PARTITION BY sku ORDER BY moved_at, movement_id), 0) - delta AS INTEGER)
        AS short_qty,
    balance_after
FROM floored;
