WITH cur AS (
  SELECT *,
         row_number() OVER (PARTITION BY sku ORDER BY price_version DESC) AS rn
  FROM price_changes
)
SELECT CAST(sku AS VARCHAR) AS sku,
       CAST(list_price AS DECIMAL(10,2)) AS list_price,
       CAST(sale_price AS DECIMAL(10,2)) AS sale_price,
       CAST(CASE WHEN sale_price IS NOT NULL THEN sale_price ELSE list_price END AS DECIMAL(10,2)) AS effective_price,
       CAST(currency AS VARCHAR) AS currency,
       CAST(price_version AS INTEGER) AS price_version,
       CAST(changed_at AS TIMESTAMP) AS changed_at
FROM cur
WHERE rn = 1
ORDER BY sku
