-- Net revenue by delta: a new sale adds its amount to its product and week, a new refund
-- subtracts its amount from its sale's product and week (the sale stored, or in the same
-- batch); the categories and weeks whose nets change are ranked again from all their products.
-- Sale and refund ids already stored are skipped; everything commits together.
BEGIN TRANSACTION;

CREATE TABLE IF NOT EXISTS category_weekly_top (
    week        DATE,
    category    VARCHAR,
    rank        INTEGER,
    product_id  VARCHAR,
    net_revenue DECIMAL(12,2)
);

CREATE TABLE IF NOT EXISTS product_week_net (
    week        DATE,
    category    VARCHAR,
    product_id  VARCHAR,
    net_revenue DECIMAL(12,2)
);

CREATE TABLE IF NOT EXISTS sale_store (
    sale_id    BIGINT PRIMARY KEY,
    week       DATE,
    category   VARCHAR,
    product_id VARCHAR
);

CREATE TABLE IF NOT EXISTS refund_store (
    refund_id BIGINT PRIMARY KEY,
    sale_id   BIGINT,
    amount    DECIMAL(10,2)
);

DROP TABLE IF EXISTS batch_sale_ids;

CREATE TEMP TABLE batch_sale_ids AS
SELECT sale_id FROM incoming.sales
UNION ALL SELECT coalesce(min(sale_id), -1) FROM incoming.sales;

DROP TABLE IF EXISTS known_sales;

CREATE TEMP TABLE known_sales AS
SELECT s.sale_id FROM sale_store AS s WHERE s.sale_id IN (SELECT sale_id FROM batch_sale_ids);

DROP TABLE IF EXISTS fresh_sales;

CREATE TEMP TABLE fresh_sales AS
SELECT DISTINCT ON (sale_id) sale_id, CAST(date_trunc('week', sold_at) AS DATE) AS week,
       category, product_id, amount
FROM incoming.sales
WHERE sale_id NOT IN (SELECT sale_id FROM known_sales)
ORDER BY sale_id;

DROP TABLE IF EXISTS batch_refund_ids;

CREATE TEMP TABLE batch_refund_ids AS
SELECT refund_id FROM incoming.refunds
UNION ALL SELECT coalesce(min(refund_id), -1) FROM incoming.refunds;

DROP TABLE IF EXISTS known_refunds;

CREATE TEMP TABLE known_refunds AS
SELECT r.refund_id FROM refund_store AS r
WHERE r.refund_id IN (SELECT refund_id FROM batch_refund_ids);

DROP TABLE IF EXISTS fresh_refunds;

CREATE TEMP TABLE fresh_refunds AS
SELECT DISTINCT ON (refund_id) refund_id, sale_id, amount
FROM incoming.refunds
WHERE refund_id NOT IN (SELECT refund_id FROM known_refunds)
ORDER BY refund_id;

-- A refund counts when it comes in, against its stored sale or a sale of its batch.
DROP TABLE IF EXISTS fresh_sale_keys;

CREATE TEMP TABLE fresh_sale_keys AS
SELECT sale_id FROM fresh_sales UNION ALL SELECT coalesce(min(sale_id), -1) FROM fresh_sales;

DROP TABLE IF EXISTS waiting_refunds;

CREATE TEMP TABLE waiting_refunds AS
SELECT r.sale_id, r.amount FROM refund_store AS r WHERE FALSE;

DROP TABLE IF EXISTS refund_sale_keys;

CREATE TEMP TABLE refund_sale_keys AS
SELECT sale_id FROM fresh_refunds UNION ALL SELECT coalesce(min(sale_id), -1) FROM fresh_refunds;

DROP TABLE IF EXISTS refunded_sales;

CREATE TEMP TABLE refunded_sales AS
SELECT s.sale_id, s.week, s.category, s.product_id FROM sale_store AS s
WHERE s.sale_id IN (SELECT sale_id FROM refund_sale_keys);

DROP TABLE IF EXISTS deltas;

CREATE TEMP TABLE deltas AS
SELECT week, category, product_id, CAST(sum(delta) AS DECIMAL(12,2)) AS delta
FROM (
    SELECT week, category, product_id, amount AS delta FROM fresh_sales
    UNION ALL
    SELECT s.week, s.category, s.product_id, -r.amount
    FROM (SELECT sale_id, amount FROM waiting_refunds
          UNION ALL SELECT sale_id, amount FROM fresh_refunds) AS r
    JOIN fresh_sales AS s ON s.sale_id = r.sale_id
    UNION ALL
    SELECT s.week, s.category, s.product_id, -r.amount
    FROM fresh_refunds AS r JOIN refunded_sales AS s ON s.sale_id = r.sale_id
) AS parts
GROUP BY week, category, product_id;

DROP TABLE IF EXISTS groups;

CREATE TEMP TABLE groups AS
SELECT DISTINCT week, category FROM deltas;

DROP TABLE IF EXISTS week_keys;

CREATE TEMP TABLE week_keys AS
SELECT week FROM groups UNION ALL SELECT DATE '1970-01-01';

DROP TABLE IF EXISTS new_net;

CREATE TEMP TABLE new_net AS
SELECT week, category, product_id, CAST(sum(net) AS DECIMAL(12,2)) AS net_revenue
FROM (
    SELECT n.week, n.category, n.product_id, n.net_revenue AS net
    FROM product_week_net AS n
    WHERE n.week IN (SELECT week FROM week_keys)
      AND (n.week, n.category) IN (SELECT week, category FROM groups)
    UNION ALL
    SELECT week, category, product_id, delta FROM deltas
) AS parts
GROUP BY week, category, product_id;

DROP TABLE IF EXISTS new_top;

CREATE TEMP TABLE new_top AS
SELECT week, category, CAST(rank AS INTEGER) AS rank, product_id, net_revenue
FROM (
    SELECT *, row_number() OVER (PARTITION BY week, category
                                 ORDER BY net_revenue DESC, product_id) AS rank
    FROM new_net WHERE net_revenue > 0
) AS ranked
WHERE rank <= 3;

DELETE FROM product_week_net
WHERE week IN (SELECT week FROM week_keys)
  AND (week, category) IN (SELECT week, category FROM groups);

INSERT INTO product_week_net SELECT week, category, product_id, net_revenue FROM new_net;

DELETE FROM category_weekly_top
WHERE week IN (SELECT week FROM week_keys)
  AND (week, category) IN (SELECT week, category FROM groups);

INSERT INTO category_weekly_top SELECT week, category, rank, product_id, net_revenue FROM new_top;

INSERT INTO sale_store SELECT sale_id, week, category, product_id FROM fresh_sales;

INSERT INTO refund_store SELECT refund_id, sale_id, amount FROM fresh_refunds;

COMMIT;
