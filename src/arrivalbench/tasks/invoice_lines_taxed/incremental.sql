-- Incremental: the target is keyed on the line id, and each run inserts the batch's lines
-- (one row per id) that the target does not hold yet. The only stored rows it reads are
-- those whose ids the batch carries. One write: a retried batch landed or did not.
CREATE TABLE IF NOT EXISTS invoice_lines_taxed (
    line_id       BIGINT PRIMARY KEY,
    invoice_id    BIGINT,
    customer_id   INTEGER,
    sku           VARCHAR,
    net_amount    DECIMAL(12,2),
    tax_rate      DECIMAL(6,4),
    tax_amount    DECIMAL(12,2),
    gross_amount  DECIMAL(12,2),
    billed_at     TIMESTAMP,
    billing_month DATE
);

-- The batch's ids, never empty (an empty batch looks up id 0): DuckDB pushes the ids of the
-- lookup's batch side into the scan of the stored table, but from an empty side it pushes
-- nothing and would read the table whole.
CREATE OR REPLACE TEMP TABLE batch_ids AS
SELECT line_id FROM incoming.invoice_lines UNION ALL SELECT coalesce(min(line_id), 0) FROM incoming.invoice_lines;

CREATE OR REPLACE TEMP TABLE known AS
SELECT s.line_id FROM invoice_lines_taxed AS s WHERE s.line_id IN (SELECT line_id FROM batch_ids);

INSERT INTO invoice_lines_taxed
WITH lines AS (
    SELECT
        line_id, invoice_id, customer_id, sku, billed_at,
        CAST(round(quantity * unit_price * (100 - COALESCE(discount_pct, 0)) * 0.01, 2)
             AS DECIMAL(12,2)) AS net_amount,
        CAST(CASE tax_region
            WHEN 'DE' THEN 0.19 WHEN 'FR' THEN 0.20 WHEN 'NL' THEN 0.21 WHEN 'CH' THEN 0.081
            WHEN 'US-CA' THEN 0.0725 WHEN 'US-NY' THEN 0.04 ELSE 0 END AS DECIMAL(6,4)) AS tax_rate
    FROM incoming.invoice_lines
    WHERE line_id NOT IN (SELECT line_id FROM known)
    QUALIFY row_number() OVER (PARTITION BY line_id ORDER BY billed_at) = 1
)
SELECT
    line_id, invoice_id, customer_id, sku, net_amount, tax_rate,
    CAST(round(net_amount * tax_rate, 2) AS DECIMAL(12,2)),
    net_amount + CAST(round(net_amount * tax_rate, 2) AS DECIMAL(12,2)),
    billed_at,
    CAST(date_trunc('month', billed_at) AS DATE)
FROM lines;
