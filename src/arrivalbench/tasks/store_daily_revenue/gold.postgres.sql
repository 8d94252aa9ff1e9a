-- Incremental daily revenue: one transaction per batch.
-- The script keeps the order numbers it has counted (loaded_orders) and adds only orders it has
-- not counted before to the running totals. Everything between BEGIN and COMMIT is applied
-- together or not at all, so the ledger of counted orders and the totals never disagree.
BEGIN TRANSACTION;

CREATE TABLE IF NOT EXISTS daily_store_revenue (
    store_id INTEGER       NOT NULL,
    day      DATE          NOT NULL,
    revenue  DECIMAL(12,2) NOT NULL,
    orders   BIGINT        NOT NULL,
    PRIMARY KEY (store_id, day)
);

CREATE TABLE IF NOT EXISTS loaded_orders (
    order_id BIGINT PRIMARY KEY
);

-- Orders of this batch not counted yet, one row per order number.
CREATE TEMP TABLE new_orders AS
SELECT
    i.order_id,
    any_value(i.store_id)   AS store_id,
    any_value(i.amount)     AS amount,
    any_value(i.ordered_at) AS ordered_at
FROM incoming.orders AS i
WHERE NOT EXISTS (SELECT 1 FROM loaded_orders AS l WHERE l.order_id = i.order_id)
GROUP BY i.order_id;

INSERT INTO loaded_orders (order_id)
SELECT order_id FROM new_orders;

INSERT INTO daily_store_revenue AS t (store_id, day, revenue, orders)
SELECT
    store_id,
    CAST(ordered_at AS DATE),
    CAST(COALESCE(SUM(amount), 0) AS DECIMAL(12,2)),
    COUNT(*)
FROM new_orders
GROUP BY store_id, CAST(ordered_at AS DATE)
ON CONFLICT (store_id, day) DO UPDATE SET
    revenue = t.revenue + EXCLUDED.revenue,
    orders  = t.orders + EXCLUDED.orders;

DROP TABLE new_orders;

COMMIT;
