-- Every delivered line and cancellation goes to a landing table as it comes; the table is then
-- rebuilt from the landing tables, one record per id: a line counts unless a cancellation names
-- it or its order, and each store and day's figures come from its orders' baskets.
CREATE TABLE IF NOT EXISTS lines_landing (
    line_id     BIGINT,
    order_id    BIGINT,
    store_id    INTEGER,
    customer_id VARCHAR,
    amount      DECIMAL(10,2),
    ordered_at  TIMESTAMP
);

CREATE TABLE IF NOT EXISTS cancellations_landing (
    cancellation_id BIGINT,
    order_id        BIGINT,
    line_id         BIGINT,
    cancelled_at    TIMESTAMP
);

INSERT INTO lines_landing
SELECT line_id, order_id, store_id, customer_id, amount, ordered_at FROM incoming.order_lines;

INSERT INTO cancellations_landing
SELECT cancellation_id, order_id, line_id, cancelled_at FROM incoming.cancellations;

DROP TABLE IF EXISTS store_daily_basket_stats;

-- The median takes the middle basket, or the mean of the two middle ones: twice a middle
-- position is n + 1 for an odd count n, and n or n + 2 for an even one.
CREATE TABLE store_daily_basket_stats AS
WITH baskets AS (
    SELECT l.store_id, CAST(l.ordered_at AS DATE) AS day, l.order_id,
           min(l.customer_id) AS customer_id, sum(l.amount) AS basket
    FROM (SELECT DISTINCT ON (line_id) * FROM lines_landing ORDER BY line_id) AS l
    WHERE l.line_id NOT IN (SELECT line_id FROM cancellations_landing
                            WHERE line_id IS NOT NULL)
      AND l.order_id NOT IN (SELECT order_id FROM cancellations_landing
                             WHERE order_id IS NOT NULL)
    GROUP BY l.store_id, CAST(l.ordered_at AS DATE), l.order_id
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
