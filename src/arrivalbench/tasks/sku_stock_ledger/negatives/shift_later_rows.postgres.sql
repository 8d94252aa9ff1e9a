-- New movements continue each SKU's ledger from its stock; a movement earlier than the
-- SKU's latest is carried from the row before it, and every later row moves by what it
-- changed the stock by.
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

CREATE TEMP TABLE ledger_rows AS
SELECT l.* FROM sku_stock_ledger AS l WHERE l.sku IN (SELECT sku FROM reordered_keys);

CREATE TEMP TABLE late_first AS
SELECT DISTINCT ON (sku) sku, moved_at, movement_id
FROM fresh WHERE sku IN (SELECT sku FROM reordered)
ORDER BY sku, moved_at, movement_id;

-- A late SKU's new movements start from the stock after the ledger row just before them.
CREATE TEMP TABLE late_opening AS
SELECT f.sku, f.moved_at, f.movement_id,
       coalesce((SELECT r.balance_after FROM ledger_rows AS r
                 WHERE r.sku = f.sku
                   AND (r.moved_at, r.movement_id) < (f.moved_at, f.movement_id)
                 ORDER BY r.moved_at DESC, r.movement_id DESC LIMIT 1), 0) AS opening
FROM late_first AS f;

CREATE TEMP TABLE work AS
SELECT f.movement_id, f.sku, f.movement_type, f.quantity, f.moved_at,
       coalesce(s.stock, 0) AS opening
FROM fresh AS f LEFT JOIN stored AS s ON s.sku = f.sku
WHERE f.sku NOT IN (SELECT sku FROM reordered)
UNION ALL
SELECT f.movement_id, f.sku, f.movement_type, f.quantity, f.moved_at, o.opening
FROM fresh AS f JOIN late_opening AS o ON o.sku = f.sku;

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

-- What the late movements changed the stock by: every later row moves by as much.
CREATE TEMP TABLE effect AS
SELECT o.sku, o.moved_at, o.movement_id,
       (SELECT c.balance_after FROM carried AS c WHERE c.sku = o.sku
        ORDER BY c.moved_at DESC, c.movement_id DESC LIMIT 1) - o.opening AS shift
FROM late_opening AS o;

CREATE TEMP TABLE shifted AS
SELECT r.movement_id, r.sku, r.movement_type, r.quantity, r.moved_at, r.short_qty,
       CAST(r.balance_after + e.shift AS BIGINT) AS balance_after
FROM ledger_rows AS r JOIN effect AS e ON e.sku = r.sku
WHERE (r.moved_at, r.movement_id) > (e.moved_at, e.movement_id);

CREATE TEMP TABLE written AS
SELECT movement_id, sku, movement_type, quantity, moved_at,
       CAST(balance_after - balance_before - delta AS INTEGER) AS short_qty,
       balance_after
FROM carried
UNION ALL
SELECT * FROM shifted;

CREATE TEMP TABLE new_state AS
SELECT DISTINCT ON (sku) sku, balance_after AS stock, moved_at AS last_moved_at,
       movement_id AS last_movement_id
FROM written
ORDER BY sku, moved_at DESC, movement_id DESC;

CREATE TEMP TABLE rewritten_ids AS
SELECT movement_id FROM shifted
UNION ALL SELECT 0;

BEGIN TRANSACTION;

DELETE FROM sku_stock_ledger
WHERE movement_id IN (SELECT movement_id FROM rewritten_ids)
  AND movement_id IN (SELECT movement_id FROM shifted);

INSERT INTO sku_stock_ledger SELECT * FROM written;

DELETE FROM sku_state
WHERE sku IN (SELECT sku FROM sku_keys)
  AND sku IN (SELECT sku FROM new_state);

INSERT INTO sku_state SELECT * FROM new_state;

COMMIT;
