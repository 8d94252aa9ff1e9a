WITH per_product AS (
  SELECT category,
         product_id,
         sum(line_amount) AS revenue,
         sum(quantity) AS units
  FROM order_lines
  GROUP BY category, product_id
), ranked AS (
  SELECT *,
         row_number() OVER (PARTITION BY category ORDER BY revenue DESC, product_id ASC) AS rk
  FROM per_product
)
SELECT CAST(category AS VARCHAR) AS category,
       CAST(rk AS INTEGER) AS rank,
       CAST(product_id AS INTEGER) AS product_id,
       CAST(revenue AS DECIMAL(14,2)) AS revenue,
       CAST(units AS BIGINT) AS units
FROM ranked
WHERE rk <= 3
ORDER BY category NULLS LAST, rank
