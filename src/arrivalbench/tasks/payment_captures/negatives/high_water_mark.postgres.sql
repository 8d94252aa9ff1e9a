-- Incremental load by capture time: take the captures at or after the newest capture already
-- loaded, skipping capture ids the table already holds.
CREATE TABLE IF NOT EXISTS payment_captures (
    capture_id     VARCHAR PRIMARY KEY,
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
SELECT DISTINCT ON (c.capture_id)
    c.capture_id,
    c.payment_intent,
    c.merchant_id,
    upper(c.currency),
    CAST(CASE WHEN upper(c.currency) IN ('JPY', 'KRW') THEN c.amount_minor
              ELSE c.amount_minor / 100.0 END AS DECIMAL(14,2)),
    c.card_brand,
    c.captured_at,
    CAST(c.captured_at AS DATE)
FROM incoming.captures AS c
WHERE c.captured_at >= (SELECT COALESCE(MAX(captured_at), TIMESTAMP '1970-01-01')
                        FROM payment_captures)
  AND c.capture_id NOT IN (SELECT capture_id FROM payment_captures)
ORDER BY c.capture_id;
