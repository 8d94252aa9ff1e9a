WITH matched AS (
    SELECT
        p.*,
        CASE WHEN p.currency = 'EUR' THEN 1 ELSE r.rate_to_eur END AS rate
    FROM payments AS p
    LEFT JOIN fx_rates AS r
      ON r.currency = p.currency AND r.effective_at <= p.paid_at
    QUALIFY row_number() OVER (PARTITION BY p.payment_id
                               ORDER BY r.effective_at DESC NULLS LAST, r.rate_id DESC) = 1
)
SELECT
    payment_id,
    merchant_id,
    currency,
    amount,
    paid_at,
    CAST(rate AS DECIMAL(12,6))                  AS rate_to_eur,
    CAST(round(amount * rate, 2) AS DECIMAL(14,2)) AS amount_eur
FROM matched
