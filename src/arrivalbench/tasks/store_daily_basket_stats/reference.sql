-- A line counts unless a cancellation names it or its order; an order's basket is the sum of
-- its counting lines. The median takes the middle basket, or the mean of the two middle ones:
-- twice a middle position is n + 1 for an odd count n, and n or n + 2 for an even one.
WITH baskets AS (
    SELECT l.store_id, CAST(l.ordered_at AS DATE) AS day, l.order_id,
           min(l.customer_id) AS customer_id, sum(l.amount) AS basket
    FROM order_lines AS l
    WHERE NOT EXISTS (SELECT 1 FROM cancellations AS c
                      WHERE c.line_id = l.line_id OR c.order_id = l.order_id)
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
GROUP BY store_id, day
