-- The target is the capture history itself. Each run adds the captures of the batch whose
-- capture id the table does not hold yet (a left anti-join), one row per capture id.
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
LEFT JOIN payment_captures AS p ON p.capture_id = c.capture_id
WHERE p.capture_id IS NULL
ORDER BY c.capture_id;
