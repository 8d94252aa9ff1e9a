WITH matched AS (
  SELECT
    p.payment_id, p.merchant_id, p.currency, p.amount, p.paid_at,
    r.rate_to_eur,
    ROW_NUMBER() OVER (
      PARTITION BY p.payment_id
      ORDER BY r.effective_at DESC NULLS LAST, r.rate_id DESC NULLS LAST
    ) AS rn
  FROM payments p
  LEFT JOIN fx_rates r
    ON r.currency = p.currency
   AND r.effective_at <= p.paid_at
),
picked AS (
  SELECT
    payment_id, merchant_id, currency, amount, paid_at,
    CASE WHEN currency = 'EUR' THEN CAST(1 AS DECIMAL(12,6)) ELSE rate_to_eur END AS rate
  FROM matched
  WHERE rn = 1
)
SELECT
  CAST(payment_id AS VARCHAR) AS payment_id,
  CAST(merchant_id AS INTEGER) AS merchant_id,
  CAST(currency AS VARCHAR) AS currency,
  CAST(amount AS DECIMAL(12,2)) AS amount,
  CAST(paid_at AS TIMESTAMP) AS paid_at,
  CAST(rate AS DECIMAL(12,6)) AS rate_to_eur,
  CAST(ROUND(amount * rate, 2) AS DECIMAL(14,2)) AS amount_eur
FROM picked
ORDER BY payment_id
