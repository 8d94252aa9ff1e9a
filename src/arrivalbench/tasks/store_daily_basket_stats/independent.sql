WITH
-- the same record (same key) may be delivered several times: keep one copy per key
lines AS (
    SELECT *
    FROM order_lines
    QUALIFY row_number() OVER (PARTITION BY line_id) = 1
),
cancels AS (
    SELECT *
    FROM cancellations
    QUALIFY row_number() OVER (PARTITION BY cancellation_id) = 1
),
-- a line survives unless some cancellation names its line id or its order id;
-- cancellation time plays no role (a cancellation received before its line still applies)
live_lines AS (
    SELECT l.*
    FROM lines l
    WHERE NOT EXISTS (SELECT 1 FROM cancels c WHERE c.line_id = l.line_id)
      AND NOT EXISTS (SELECT 1 FROM cancels c WHERE c.order_id = l.order_id)
),
-- orders that count: at least one live line; basket = sum of live line amounts
baskets AS (
    SELECT
        order_id,
        min(store_id)          AS store_id,
        min(customer_id)       AS customer_id,
        min(ordered_at)::DATE  AS day,
        sum(amount)            AS basket
    FROM live_lines
    GROUP BY order_id
),
ranked AS (
    SELECT
        *,
        row_number() OVER (PARTITION BY store_id, day ORDER BY basket) AS rn,
        count(*)     OVER (PARTITION BY store_id, day)                 AS n
    FROM baskets
)
SELECT
    store_id::INTEGER                          AS store_id,
    day::DATE                                  AS day,
    count(*)::BIGINT                           AS orders,
    count(DISTINCT customer_id)::BIGINT        AS customers,
    -- middle basket, or exact average of the two middle ones (decimal arithmetic)
    (sum(basket) FILTER (WHERE rn IN ((n + 1) // 2, (n + 2) // 2))
        * CASE WHEN n % 2 = 0 THEN 0.5 ELSE 1 END)::DECIMAL(14,3) AS median_basket,
    max(basket)::DECIMAL(14,2)                 AS max_basket
FROM ranked
GROUP BY store_id, day, n
ORDER BY store_id, day
