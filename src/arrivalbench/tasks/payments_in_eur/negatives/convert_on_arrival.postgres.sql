-- Keep the rates once per rate id. A payment is converted when it first comes in, at the rate
-- on record for its time, and added to the table; converted payments are final.
CREATE TABLE IF NOT EXISTS fx_rates_history (
    rate_id      BIGINT PRIMARY KEY,
    currency     VARCHAR,
    rate_to_eur  DECIMAL(12,6),
    effective_at TIMESTAMP
);

CREATE TABLE IF NOT EXISTS payments_eur (
    payment_id  VARCHAR PRIMARY KEY,
    merchant_id INTEGER,
    currency    VARCHAR,
    amount      DECIMAL(12,2),
    paid_at     TIMESTAMP,
    rate_to_eur DECIMAL(12,6),
    amount_eur  DECIMAL(14,2)
);

INSERT INTO fx_rates_history
SELECT DISTINCT rate_id, currency, rate_to_eur, effective_at FROM incoming.fx_rates
ON CONFLICT DO NOTHING;

INSERT INTO payments_eur
WITH fresh AS (
    SELECT DISTINCT ON (payment_id) payment_id, merchant_id, currency, amount, paid_at
    FROM incoming.payments
    WHERE payment_id NOT IN (SELECT payment_id FROM payments_eur)
    ORDER BY payment_id
),
matched AS (
    SELECT
        p.*,
        CASE WHEN p.currency = 'EUR' THEN 1 ELSE r.rate_to_eur END AS rate,
        row_number() OVER (PARTITION BY p.payment_id
                           ORDER BY r.effective_at DESC NULLS LAST,
                                    r.rate_id DESC NULLS LAST) AS rn
    FROM fresh AS p
    LEFT JOIN fx_rates_history AS r
      ON r.currency = p.currency AND r.effective_at <= p.paid_at
)
SELECT payment_id, merchant_id, currency, amount, paid_at,
       CAST(rate AS DECIMAL(12,6)), CAST(round(amount * rate, 2) AS DECIMAL(14,2))
FROM matched
WHERE rn = 1;
