-- Append each delivery's captures to the table.
CREATE TABLE IF NOT EXISTS payment_captures (
    capture_id     VARCHAR,
    payment_intent VARCHAR,
    merchant_id    INTEGER,
    currency       VARCHAR,
    amount         DECIMAL(14,2),
    card_brand     VARCHAR,
    captured_at    TIMESTAMP,
    capture_date   DATE
);

-- 100.0, not 100: DuckDB's / on integers divides exactly, PostgreSQL's truncates.
INSERT INTO payment_captures
SELECT
    capture_id,
    payment_intent,
    merchant_id,
    upper(currency),
    CAST(CASE WHEN upper(currency) IN ('JPY', 'KRW') THEN amount_minor
              ELSE amount_minor / 100.0 END AS DECIMAL(14,2)),
    card_brand,
    captured_at,
    CAST(captured_at AS DATE)
FROM incoming.captures;
