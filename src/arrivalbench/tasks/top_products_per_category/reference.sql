WITH per_product AS (
    SELECT category, product_id, sum(line_amount) AS revenue, sum(quantity) AS units
    FROM order_lines
    GROUP BY category, product_id
)
SELECT category, rank, product_id, revenue, units
FROM (
    SELECT *, row_number() OVER (PARTITION BY category ORDER BY revenue DESC, product_id) AS rank
    FROM per_product
)
WHERE rank <= 3
