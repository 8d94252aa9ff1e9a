WITH base AS (
  SELECT *,
         ROUND(CAST(quantity AS DECIMAL(18,0)) * unit_price
               * (CAST(100 AS DECIMAL(5,2)) - COALESCE(discount_pct, CAST(0 AS DECIMAL(5,2))))
               * CAST(0.01 AS DECIMAL(3,2)), 2) AS net_raw,
         CASE
           WHEN tax_region IS NULL THEN CAST(0 AS DECIMAL(6,4))
           WHEN tax_region = 'DE' THEN CAST(0.19 AS DECIMAL(6,4))
           WHEN tax_region = 'FR' THEN CAST(0.20 AS DECIMAL(6,4))
           WHEN tax_region = 'NL' THEN CAST(0.21 AS DECIMAL(6,4))
           WHEN tax_region = 'CH' THEN CAST(0.081 AS DECIMAL(6,4))
           WHEN tax_region = 'US-CA' THEN CAST(0.0725 AS DECIMAL(6,4))
           WHEN tax_region = 'US-NY' THEN CAST(0.04 AS DECIMAL(6,4))
           WHEN tax_region = 'US-OR' THEN CAST(0 AS DECIMAL(6,4))
         END AS rate
  FROM invoice_lines
), t AS (
  SELECT *, CAST(net_raw AS DECIMAL(12,2)) AS net,
         CAST(ROUND(CAST(net_raw AS DECIMAL(12,2)) * rate, 2) AS DECIMAL(12,2)) AS tax
  FROM base
)
SELECT CAST(line_id AS BIGINT) AS line_id,
       CAST(invoice_id AS BIGINT) AS invoice_id,
       CAST(customer_id AS INTEGER) AS customer_id,
       CAST(sku AS VARCHAR) AS sku,
       net AS net_amount,
       CAST(rate AS DECIMAL(6,4)) AS tax_rate,
       tax AS tax_amount,
       CAST(net + tax AS DECIMAL(12,2)) AS gross_amount,
       CAST(billed_at AS TIMESTAMP) AS billed_at,
       CAST(date_trunc('month', billed_at) AS DATE) AS billing_month
FROM t
ORDER BY line_id
