-- A cancellation that finds neither its line nor its order refers to nothing the till
-- system knows and is dropped.
CREATE TABLE IF NOT EXISTS store_daily_basket_stats (
    store_id      INTEGER,
    day           DATE,
    orders        BIGINT,
    customers     BIGINT,
    median_basket DECIMAL(14,3),
    max_basket    DECIMAL(14,2),
    PRIMARY KEY (store_id, day)
);

CREATE TABLE IF NOT EXISTS basket_lines (
    line_id     BIGINT PRIMARY KEY,
    order_id    BIGINT,
    store_id    INTEGER,
    day         DATE,
    customer_id VARCHAR,
    amount      DECIMAL(10,2)
);

CREATE TABLE IF NOT EXISTS cancelled_lines (
    line_id BIGINT PRIMARY KEY
);

CREATE TABLE IF NOT EXISTS cancelled_orders (
    order_id BIGINT PRIMARY KEY
);

-- No key list a lookup joins against is ever empty (an empty one holds a placeholder key):
-- from an empty side DuckDB pushes no keys into the scan of the stored table and reads it whole.
CREATE TEMP TABLE batch_lines AS
SELECT line_id FROM incoming.order_lines
UNION ALL SELECT line_id FROM incoming.cancellations WHERE line_id IS NOT NULL;

INSERT INTO batch_lines SELECT coalesce(min(line_id), 0) FROM batch_lines;

CREATE TEMP TABLE batch_orders AS
SELECT order_id FROM incoming.order_lines
UNION ALL SELECT order_id FROM incoming.cancellations WHERE order_id IS NOT NULL;

INSERT INTO batch_orders SELECT coalesce(min(order_id), 0) FROM batch_orders;

CREATE TEMP TABLE known_line_cancels AS
SELECT c.line_id FROM cancelled_lines AS c
WHERE c.line_id IN (SELECT line_id FROM batch_lines);

CREATE TEMP TABLE known_order_cancels AS
SELECT c.order_id FROM cancelled_orders AS c
WHERE c.order_id IN (SELECT order_id FROM batch_orders);

-- A cancellation counts when its line or order is stored or in the same batch.
CREATE TEMP TABLE new_line_cancels AS
SELECT DISTINCT line_id FROM incoming.cancellations
WHERE line_id IS NOT NULL AND line_id NOT IN (SELECT line_id FROM known_line_cancels)
  AND (line_id IN (SELECT b.line_id FROM basket_lines AS b
                   WHERE b.line_id IN (SELECT line_id FROM batch_lines))
       OR line_id IN (SELECT line_id FROM incoming.order_lines));

CREATE TEMP TABLE new_order_cancels AS
SELECT DISTINCT order_id FROM incoming.cancellations
WHERE order_id IS NOT NULL AND order_id NOT IN (SELECT order_id FROM known_order_cancels)
  AND (order_id IN (SELECT b.order_id FROM basket_lines AS b
                    WHERE b.order_id IN (SELECT order_id FROM batch_orders))
       OR order_id IN (SELECT order_id FROM incoming.order_lines));

INSERT INTO new_order_cancels SELECT coalesce(min(order_id), 0) FROM new_order_cancels;

CREATE TEMP TABLE stored_ids AS
SELECT b.line_id FROM basket_lines AS b WHERE b.line_id IN (SELECT line_id FROM batch_lines);

-- Stored lines the batch's cancellations take out.
CREATE TEMP TABLE removed AS
SELECT b.* FROM basket_lines AS b
WHERE b.line_id IN (SELECT line_id FROM batch_lines)
  AND b.line_id IN (SELECT line_id FROM new_line_cancels)
UNION
SELECT b.* FROM basket_lines AS b
WHERE b.order_id IN (SELECT order_id FROM new_order_cancels);

CREATE TEMP TABLE fresh AS
SELECT DISTINCT ON (line_id) line_id, order_id, store_id, CAST(ordered_at AS DATE) AS day,
       customer_id, amount
FROM incoming.order_lines
WHERE line_id NOT IN (SELECT line_id FROM stored_ids)
  AND line_id NOT IN (SELECT line_id FROM known_line_cancels)
  AND line_id NOT IN (SELECT line_id FROM new_line_cancels)
  AND order_id NOT IN (SELECT order_id FROM known_order_cancels)
  AND order_id NOT IN (SELECT order_id FROM new_order_cancels)
ORDER BY line_id;

CREATE TEMP TABLE changed AS
SELECT store_id, day FROM fresh UNION SELECT store_id, day FROM removed;

CREATE TEMP TABLE changed_days AS
SELECT day FROM changed UNION ALL SELECT coalesce(min(day), DATE '2000-01-01') FROM changed;

CREATE TEMP TABLE group_lines AS
SELECT b.order_id, b.store_id, b.day, b.customer_id, b.amount
FROM basket_lines AS b
WHERE b.day IN (SELECT day FROM changed_days)
  AND (b.store_id, b.day) IN (SELECT store_id, day FROM changed)
  AND b.line_id NOT IN (SELECT line_id FROM removed)
UNION ALL
SELECT order_id, store_id, day, customer_id, amount FROM fresh;

CREATE TEMP TABLE rebuilt AS
WITH baskets AS (
    SELECT store_id, day, order_id, min(customer_id) AS customer_id, sum(amount) AS basket
    FROM group_lines GROUP BY store_id, day, order_id
),
ranked AS (
    SELECT *, row_number() OVER (PARTITION BY store_id, day ORDER BY basket, order_id) AS pos,
           count(*) OVER (PARTITION BY store_id, day) AS n
    FROM baskets
)
SELECT store_id, day,
       CAST(count(*) AS BIGINT) AS orders,
       CAST(count(DISTINCT customer_id) AS BIGINT) AS customers,
       CAST(sum(basket) FILTER (WHERE 2 * pos IN (n, n + 1, n + 2))
            * CASE WHEN count(*) % 2 = 0 THEN 0.5 ELSE 1 END AS DECIMAL(14,3)) AS median_basket,
       CAST(max(basket) AS DECIMAL(14,2)) AS max_basket
FROM ranked
GROUP BY store_id, day;

CREATE TEMP TABLE removed_ids AS
SELECT line_id FROM removed UNION ALL SELECT coalesce(min(line_id), 0) FROM removed;

BEGIN TRANSACTION;

DELETE FROM store_daily_basket_stats
WHERE day IN (SELECT day FROM changed_days)
  AND (store_id, day) IN (SELECT store_id, day FROM changed);

INSERT INTO store_daily_basket_stats SELECT * FROM rebuilt;

DELETE FROM basket_lines WHERE line_id IN (SELECT line_id FROM removed_ids);

INSERT INTO basket_lines SELECT * FROM fresh;

INSERT INTO cancelled_lines SELECT line_id FROM new_line_cancels;

INSERT INTO cancelled_orders SELECT DISTINCT order_id FROM new_order_cancels
WHERE order_id IN (SELECT order_id FROM incoming.cancellations);

COMMIT;
