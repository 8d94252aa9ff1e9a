-- Both feeds land as they come (rates once per rate id); the converted payments are recomputed
-- from the landing tables on every run.
CREATE TABLE IF NOT EXISTS fx_rates_landing (
    rate_id      BIGINT PRIMARY KEY,
    currency     VARCHAR,
    rate_to_eur  DECIMAL(12,6),
    effective_at TIMESTAMP
);

CREATE TABLE IF NOT EXISTS payments_landing (
    payment_id  VARCHAR,
    merchant_id INTEGER,
    currency    VARCHAR,
    amount      DECIMAL(12,2),
    paid_at     TIMESTAMP
);

INSERT INTO fx_rates_landing
SELECT DISTINCT rate_id, currency, rate_to_eur, effective_at FROM incoming.fx_rates
ON CONFLICT DO NOTHING;

INSERT INTO payments_landing
SELECT payment_id, merchant_id, currency, amount, paid_at FROM incoming.payments;

DROP TABLE IF EXISTS payments_eur;

CREATE TABLE payments_eur AS
WITH matched AS (
    SELECT
        p.*,
        CASE WHEN p.currency = 'EUR' THEN 1 ELSE r.rate_to_eur END AS rate,
        row_number() OVER (PARTITION BY p.delivery
                           ORDER BY r.effective_at DESC NULLS LAST,
                                    r.rate_id DESC NULLS LAST) AS rn
    FROM (SELECT *, row_number() OVER () AS delivery FROM payments_landing) AS p
    LEFT JOIN fx_rates_landing AS r
      ON r.currency = p.currency AND r.effective_at <= p.paid_at
)
SELECT
    payment_id,
    merchant_id,
    currency,
    amount,
    paid_at,
    CAST(rate AS DECIMAL(12,6))                    AS rate_to_eur,
    CAST(round(amount * rate, 2) AS DECIMAL(14,2)) AS amount_eur
FROM matched
WHERE rn = 1;
