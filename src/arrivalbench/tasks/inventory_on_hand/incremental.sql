-- Incremental: movement_history is keyed on the movement id, so a run reads only the stored
-- ids its batch repeats; stock_state keeps, per warehouse and SKU, the target's figures and the
-- position (moved_at, movement_id) of the latest movement. New movements that all come after a
-- SKU's latest one run on from its stored stock (its first stockout, once set, stays); a SKU
-- that receives an earlier movement has its history read and its running stock recomputed
-- (the only case that reads history). Only the SKUs a batch touches are read and rewritten,
-- all in one transaction: a retried batch finds its movements stored.
CREATE TABLE IF NOT EXISTS movement_history (
    movement_id  BIGINT PRIMARY KEY,
    warehouse_id INTEGER,
    sku          VARCHAR,
    quantity     INTEGER,
    moved_at     TIMESTAMP
);

CREATE TABLE IF NOT EXISTS stock_state (
    warehouse_id      INTEGER,
    sku               VARCHAR,
    on_hand           BIGINT,
    movements         BIGINT,
    last_movement_at  TIMESTAMP,
    last_movement_id  BIGINT,
    first_stockout_at TIMESTAMP,
    PRIMARY KEY (warehouse_id, sku)
);

CREATE TABLE IF NOT EXISTS inventory_on_hand (
    warehouse_id      INTEGER,
    sku               VARCHAR,
    on_hand           BIGINT,
    movements         BIGINT,
    last_movement_at  TIMESTAMP,
    first_stockout_at TIMESTAMP,
    PRIMARY KEY (warehouse_id, sku)
);

-- No key list a lookup joins against is ever empty (an empty one holds a placeholder key):
-- DuckDB pushes the keys of a join's small side into the scan of the stored table, but from an
-- empty side it pushes nothing and reads the table whole. A placeholder SKU is never rewritten.
CREATE OR REPLACE TEMP TABLE batch_ids AS
SELECT movement_id FROM incoming.stock_movements
UNION ALL SELECT coalesce(min(movement_id), 0) FROM incoming.stock_movements;

CREATE OR REPLACE TEMP TABLE known AS
SELECT h.movement_id FROM movement_history AS h
WHERE h.movement_id IN (SELECT movement_id FROM batch_ids);

CREATE OR REPLACE TEMP TABLE fresh AS
SELECT DISTINCT ON (movement_id) movement_id, warehouse_id, sku, quantity, moved_at
FROM incoming.stock_movements
WHERE movement_id NOT IN (SELECT movement_id FROM known)
ORDER BY movement_id;

CREATE OR REPLACE TEMP TABLE sku_keys AS
SELECT DISTINCT warehouse_id, sku FROM fresh
UNION ALL SELECT 0, '' WHERE NOT EXISTS (SELECT 1 FROM fresh);

CREATE OR REPLACE TEMP TABLE stored AS
SELECT s.* FROM stock_state AS s
JOIN sku_keys AS k ON s.warehouse_id = k.warehouse_id AND s.sku = k.sku;

-- SKUs whose new movements do not all come after their latest stored one.
CREATE OR REPLACE TEMP TABLE reordered AS
SELECT DISTINCT f.warehouse_id, f.sku
FROM fresh AS f JOIN stored AS s USING (warehouse_id, sku)
WHERE (f.moved_at, f.movement_id) < (s.last_movement_at, s.last_movement_id);

CREATE OR REPLACE TEMP TABLE reordered_keys AS
SELECT warehouse_id, sku FROM reordered
UNION ALL SELECT 0, '' WHERE NOT EXISTS (SELECT 1 FROM reordered);

-- Every movement whose running stock must be known: the new ones, and for reordered SKUs the
-- whole history; `base` is the stock before the first of them.
CREATE OR REPLACE TEMP TABLE running AS
SELECT m.warehouse_id, m.sku, m.movement_id, m.moved_at, m.quantity,
       m.base + sum(m.quantity) OVER (PARTITION BY m.warehouse_id, m.sku
                                      ORDER BY m.moved_at, m.movement_id
                                      ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS level
FROM (
    SELECT f.warehouse_id, f.sku, f.movement_id, f.moved_at, f.quantity,
           COALESCE(s.on_hand, 0) AS base
    FROM fresh AS f LEFT JOIN stored AS s USING (warehouse_id, sku)
    ANTI JOIN reordered AS r USING (warehouse_id, sku)
    UNION ALL
    SELECT h.warehouse_id, h.sku, h.movement_id, h.moved_at, h.quantity, 0
    FROM movement_history AS h
    JOIN reordered_keys AS k ON h.warehouse_id = k.warehouse_id AND h.sku = k.sku
    UNION ALL
    SELECT f.warehouse_id, f.sku, f.movement_id, f.moved_at, f.quantity, 0
    FROM fresh AS f SEMI JOIN reordered AS r USING (warehouse_id, sku)
) AS m;

CREATE OR REPLACE TEMP TABLE now AS
SELECT r.warehouse_id, r.sku,
       max(r.level) FILTER (WHERE r.is_last) AS on_hand,
       count(*) + CASE WHEN any_value(r.reordered) THEN 0 ELSE COALESCE(any_value(s.movements), 0) END
           AS movements,
       max(r.moved_at) AS last_movement_at,
       arg_max(r.movement_id, (r.moved_at, r.movement_id)) AS last_movement_id,
       CASE WHEN any_value(r.reordered) THEN min(r.moved_at) FILTER (WHERE r.level <= 0)
            ELSE COALESCE(any_value(s.first_stockout_at),
                          min(r.moved_at) FILTER (WHERE r.level <= 0)) END AS first_stockout_at
FROM (
    SELECT *,
           (moved_at, movement_id) = max((moved_at, movement_id))
               OVER (PARTITION BY warehouse_id, sku) AS is_last,
           EXISTS (SELECT 1 FROM reordered AS o
                   WHERE o.warehouse_id = running.warehouse_id AND o.sku = running.sku) AS reordered
    FROM running
) AS r
LEFT JOIN stored AS s USING (warehouse_id, sku)
GROUP BY r.warehouse_id, r.sku;

BEGIN TRANSACTION;

INSERT INTO movement_history SELECT * FROM fresh;

DELETE FROM stock_state AS s USING now AS n
WHERE s.warehouse_id = n.warehouse_id AND s.sku = n.sku;

INSERT INTO stock_state
SELECT warehouse_id, sku, on_hand, movements, last_movement_at, last_movement_id,
       first_stockout_at
FROM now;

DELETE FROM inventory_on_hand AS t USING now AS n
WHERE t.warehouse_id = n.warehouse_id AND t.sku = n.sku;

INSERT INTO inventory_on_hand
SELECT warehouse_id, sku, on_hand, movements, last_movement_at, first_stockout_at FROM now;

COMMIT;
