-- Every delivered sale and refund is kept in a history, one row per id; the table is then
-- rebuilt from the histories in one transaction.
BEGIN TRANSACTION;

CREATE TABLE IF NOT EXISTS sale_history (
    sale_id    BIGINT PRIMARY KEY,
    product_id VARCHAR,
    category   VARCHAR,
    amount     DECIMAL(10,2),
    sold_at    TIMESTAMP
);

CREATE TABLE IF NOT EXISTS refund_history (
    refund_id   BIGINT PRIMARY KEY,
    sale_id     BIGINT,
    amount      DECIMAL(10,2),
    refunded_at TIMESTAMP
);

INSERT INTO sale_history
SELECT DISTINCT sale_id, product_id, category, amount, sold_at FROM incoming.sales
ON CONFLICT DO NOTHING;

INSERT INTO refund_history
SELECT DISTINCT refund_id, sale_id, amount, refunded_at FROM incoming.refunds
ON CONFLICT DO NOTHING;

CREATE OR REPLACE TABLE category_weekly_top AS
WITH refunded AS (
    SELECT sale_id, sum(amount) AS amount FROM refund_history GROUP BY sale_id
),
net AS (
    SELECT CAST(date_trunc('week', s.sold_at) AS DATE) AS week, s.category, s.product_id,
           sum(s.amount - coalesce(r.amount, 0)) AS net_revenue
    FROM sale_history AS s LEFT JOIN refunded AS r ON r.sale_id = s.sale_id
    GROUP BY CAST(date_trunc('week', s.sold_at) AS DATE), s.category, s.product_id
),
ranked AS (
    SELECT *, row_number() OVER (PARTITION BY week, category
                                 ORDER BY net_revenue DESC, product_id) AS rank
    FROM net WHERE net_revenue > 0
)
SELECT week, category, CAST(rank AS INTEGER) AS rank, product_id,
       CAST(net_revenue AS DECIMAL(12,2)) AS net_revenue
FROM ranked WHERE rank <= 3;

COMMIT;
