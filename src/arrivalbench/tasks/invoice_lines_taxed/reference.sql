WITH priced AS (
    SELECT
        *,
        CAST(round(quantity * unit_price * (100 - COALESCE(discount_pct, 0)) * 0.01, 2)
             AS DECIMAL(12,2)) AS net_amount,
        CAST(CASE tax_region
            WHEN 'DE' THEN 0.19 WHEN 'FR' THEN 0.20 WHEN 'NL' THEN 0.21 WHEN 'CH' THEN 0.081
            WHEN 'US-CA' THEN 0.0725 WHEN 'US-NY' THEN 0.04 ELSE 0 END AS DECIMAL(6,4)) AS tax_rate
    FROM invoice_lines
)
SELECT
    line_id,
    invoice_id,
    customer_id,
    sku,
    net_amount,
    tax_rate,
    CAST(round(net_amount * tax_rate, 2) AS DECIMAL(12,2))              AS tax_amount,
    net_amount + CAST(round(net_amount * tax_rate, 2) AS DECIMAL(12,2)) AS gross_amount,
    billed_at,
    CAST(date_trunc('month', billed_at) AS DATE)                        AS billing_month
FROM priced
