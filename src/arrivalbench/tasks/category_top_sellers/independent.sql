WITH
-- the same record (same key) may be delivered several times: count it once
sales_once AS (
    SELECT DISTINCT sale_id, product_id, category, amount, sold_at
    FROM sales
),
refunds_once AS (
    SELECT DISTINCT refund_id, sale_id, amount, refunded_at
    FROM refunds
),
-- total refunded per sale (a sale may be refunded in several parts)
refunded_per_sale AS (
    SELECT sale_id, SUM(amount) AS refunded
    FROM refunds_once
    GROUP BY sale_id
),
-- each sale with its week (Monday) and its refunds; refunds of unknown sales drop out
-- via the join, and refunds count in the sale's week whatever their own time
sales_net AS (
    SELECT
        CAST(date_trunc('week', s.sold_at) AS DATE) AS week,
        s.category,
        s.product_id,
        s.amount,
        COALESCE(r.refunded, 0) AS refunded
    FROM sales_once AS s
    LEFT JOIN refunded_per_sale AS r ON r.sale_id = s.sale_id
),
product_week_net AS (
    SELECT week, category, product_id,
           SUM(amount) - SUM(refunded) AS net_revenue
    FROM sales_net
    GROUP BY week, category, product_id
),
ranked AS (
    SELECT week, category, product_id, net_revenue,
           ROW_NUMBER() OVER (PARTITION BY week, category
                              ORDER BY net_revenue DESC, product_id ASC) AS rnk
    FROM product_week_net
    WHERE net_revenue > 0   -- only strictly positive net revenue is ranked
)
SELECT
    week,
    category,
    CAST(rnk AS INTEGER) AS rank,
    product_id,
    CAST(net_revenue AS DECIMAL(12,2)) AS net_revenue
FROM ranked
WHERE rnk <= 3
ORDER BY week, category, rank
