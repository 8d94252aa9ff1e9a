-- Net revenue per product and week of the sale (refunds count against their sale's week;
-- refunds of unknown sales count nowhere), then the first three products above 0 per
-- category and week.
WITH refunded AS (
    SELECT sale_id, sum(amount) AS amount FROM refunds GROUP BY sale_id
),
net AS (
    SELECT CAST(date_trunc('week', s.sold_at) AS DATE) AS week, s.category, s.product_id,
           sum(s.amount - coalesce(r.amount, 0)) AS net_revenue
    FROM sales AS s LEFT JOIN refunded AS r ON r.sale_id = s.sale_id
    GROUP BY CAST(date_trunc('week', s.sold_at) AS DATE), s.category, s.product_id
),
ranked AS (
    SELECT *, row_number() OVER (PARTITION BY week, category
                                 ORDER BY net_revenue DESC, product_id) AS rank
    FROM net WHERE net_revenue > 0
)
SELECT week, category, CAST(rank AS INTEGER) AS rank, product_id,
       CAST(net_revenue AS DECIMAL(12,2)) AS net_revenue
FROM ranked WHERE rank <= 3
