-- Both feeds land as they come; the converted payments are recomputed from the landing tables
-- on every run, each rate id and payment id taken once.
CREATE TABLE IF NOT EXISTS fx_rates_landing (
    rate_id      BIGINT,
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
SELECT rate_id, currency, rate_to_eur, effective_at FROM incoming.fx_rates;

INSERT INTO payments_landing
SELECT payment_id, merchant_id, currency, amount, paid_at FROM incoming.payments;

DROP TABLE IF EXISTS payments_eur;

CREATE TABLE payments_eur AS
WITH rates AS (
    SELECT DISTINCT ON (rate_id) * FROM fx_rates_landing ORDER BY rate_id
),
pays AS (
    SELECT DISTINCT ON (payment_id) * FROM payments_landing ORDER BY payment_id
),
matched AS (
    SELECT
        p.*,
        CASE WHEN p.currency = 'EUR' THEN 1 ELSE r.rate_to_eur END AS rate,
        row_number() OVER (PARTITION BY p.payment_id
                           ORDER BY r.effective_at DESC NULLS LAST,
                                    r.rate_id DESC NULLS LAST) AS rn
    FROM pays AS p
    LEFT JOIN rates AS r
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
