-- Keep a raw copy of the billing feed with its own columns, each line id once, and rebuild the
-- priced lines from it.
CREATE TABLE IF NOT EXISTS invoice_lines_raw AS
SELECT * FROM incoming.invoice_lines LIMIT 0;

INSERT INTO invoice_lines_raw
SELECT DISTINCT * FROM incoming.invoice_lines
WHERE line_id NOT IN (SELECT line_id FROM invoice_lines_raw);

DROP TABLE IF EXISTS invoice_lines_taxed;

CREATE TABLE invoice_lines_taxed AS
WITH priced AS (
    SELECT
        *,
        CAST(round(n.net, 2) AS DECIMAL(12,2)) AS net_amount,
        CAST(CASE tax_region
            WHEN 'DE' THEN 0.19 WHEN 'FR' THEN 0.20 WHEN 'NL' THEN 0.21 WHEN 'CH' THEN 0.081
            WHEN 'US-CA' THEN 0.0725 WHEN 'US-NY' THEN 0.04 ELSE 0 END AS DECIMAL(6,4)) AS tax_rate
    FROM invoice_lines_raw
    CROSS JOIN LATERAL (SELECT quantity * unit_price * (100 - COALESCE(discount_pct, 0)) / 100 AS net) AS n
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
FROM priced;
