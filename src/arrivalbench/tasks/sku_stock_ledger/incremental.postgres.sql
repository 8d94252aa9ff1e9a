-- Incremental: the ledger is keyed on the movement id and sku_state keeps, per SKU, the stock
-- and the position (moved_at, movement_id) of its latest movement. A run reads the stored ids
-- its batch repeats and the state of the SKUs it touches. New movements that all come after a
-- SKU's latest one continue from its stock. A SKU that receives an earlier movement has its
-- ledger read and carried again from 0 (the only case that reads a SKU's history): a late
-- receipt changes what every later shipment could take, so later rows cannot be shifted by a
-- delta. Everything commits together: a retried batch finds its movements in the ledger.
CREATE TABLE IF NOT EXISTS sku_stock_ledger (
    movement_id   BIGINT PRIMARY KEY,
    sku           VARCHAR,
    movement_type VARCHAR,
    quantity      INTEGER,
    moved_at      TIMESTAMP,
    short_qty     INTEGER,
    balance_after BIGINT
);

CREATE TABLE IF NOT EXISTS sku_state (
    sku              VARCHAR PRIMARY KEY,
    stock            BIGINT,
    last_moved_at    TIMESTAMP,
    last_movement_id BIGINT
);

-- No key list a lookup joins against is ever empty (an empty one holds a placeholder key):
-- from an empty side DuckDB pushes no keys into the scan of the stored table and reads it whole.
CREATE TEMP TABLE batch_ids AS
SELECT movement_id FROM incoming.stock_movements
UNION ALL SELECT coalesce(min(movement_id), 0) FROM incoming.stock_movements;

CREATE TEMP TABLE known AS
SELECT l.movement_id FROM sku_stock_ledger AS l
WHERE l.movement_id IN (SELECT movement_id FROM batch_ids);

CREATE TEMP TABLE fresh AS
SELECT DISTINCT ON (movement_id) movement_id, sku, movement_type, quantity, moved_at
FROM incoming.stock_movements
WHERE movement_id NOT IN (SELECT movement_id FROM known)
ORDER BY movement_id;

CREATE TEMP TABLE sku_keys AS
SELECT DISTINCT sku FROM fresh
UNION ALL SELECT coalesce(min(sku), '') FROM fresh;

CREATE TEMP TABLE stored AS
SELECT s.* FROM sku_state AS s WHERE s.sku IN (SELECT sku FROM sku_keys);

-- SKUs whose new movements do not all come after their latest stored movement.
CREATE TEMP TABLE reordered AS
SELECT DISTINCT f.sku FROM fresh AS f JOIN stored AS s ON s.sku = f.sku
WHERE (f.moved_at, f.movement_id) < (s.last_moved_at, s.last_movement_id);

CREATE TEMP TABLE reordered_keys AS
SELECT sku FROM reordered
UNION ALL SELECT coalesce(min(sku), '') FROM reordered;

-- The movements to carry, with the stock each SKU starts from: an appending SKU continues
-- from its state, a reordered one starts again from 0 with its whole ledger.
CREATE TEMP TABLE work AS
SELECT f.movement_id, f.sku, f.movement_type, f.quantity, f.moved_at,
       coalesce(s.stock, 0) AS opening
FROM fresh AS f LEFT JOIN stored AS s ON s.sku = f.sku
WHERE f.sku NOT IN (SELECT sku FROM reordered)
UNION ALL
SELECT movement_id, sku, movement_type, quantity, moved_at, 0
FROM (
    SELECT l.movement_id, l.sku, l.movement_type, l.quantity, l.moved_at
    FROM sku_stock_ledger AS l WHERE l.sku IN (SELECT sku FROM reordered_keys)
    UNION ALL
    SELECT movement_id, sku, movement_type, quantity, moved_at
    FROM fresh WHERE sku IN (SELECT sku FROM reordered)
) AS whole
WHERE sku IN (SELECT sku FROM reordered);

-- From an opening stock b, the stock after each movement is b plus the running sum of the
-- signed quantities, minus the lowest that has reached below 0.
CREATE TEMP TABLE carried AS
SELECT movement_id, sku, movement_type, quantity, moved_at, delta,
       coalesce(lag(balance_after) OVER (PARTITION BY sku ORDER BY moved_at, movement_id),
                opening) AS balance_before,
       balance_after
FROM (
    SELECT *, CAST(running - least(min(running) OVER (
                       PARTITION BY sku ORDER BY moved_at, movement_id
                       ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW), 0) AS BIGINT)
                  AS balance_after
    FROM (
        SELECT *, opening + sum(delta) OVER (PARTITION BY sku ORDER BY moved_at, movement_id
                                             ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
                  AS running
        FROM (
            SELECT *, CASE WHEN movement_type = 'shipment' THEN -quantity ELSE quantity END
                          AS delta
            FROM work
        ) AS signed
    ) AS summed
) AS floored;

CREATE TEMP TABLE written AS
SELECT movement_id, sku, movement_type, quantity, moved_at,
       CAST(balance_after - balance_before - delta AS INTEGER) AS short_qty,
       balance_after
FROM carried;

CREATE TEMP TABLE new_state AS
SELECT DISTINCT ON (sku) sku, balance_after AS stock, moved_at AS last_moved_at,
       movement_id AS last_movement_id
FROM written
ORDER BY sku, moved_at DESC, movement_id DESC;

CREATE TEMP TABLE rewritten_ids AS
SELECT movement_id FROM work WHERE sku IN (SELECT sku FROM reordered)
UNION ALL SELECT 0;

BEGIN TRANSACTION;

DELETE FROM sku_stock_ledger
WHERE movement_id IN (SELECT movement_id FROM rewritten_ids)
  AND sku IN (SELECT sku FROM reordered);

INSERT INTO sku_stock_ledger SELECT * FROM written;

DELETE FROM sku_state
WHERE sku IN (SELECT sku FROM sku_keys)
  AND sku IN (SELECT sku FROM new_state);

INSERT INTO sku_state SELECT * FROM new_state;

COMMIT;
