SELECT
    CAST(capture_id AS VARCHAR) AS capture_id,
    CAST(payment_intent AS VARCHAR) AS payment_intent,
    CAST(merchant_id AS INTEGER) AS merchant_id,
    CAST(upper(currency) AS VARCHAR) AS currency,
    CAST(CASE WHEN upper(currency) IN ('JPY', 'KRW') THEN CAST(amount_minor AS DECIMAL(18,2))
              ELSE CAST(amount_minor AS DECIMAL(18,2)) / 100 END AS DECIMAL(14,2)) AS amount,
    CAST(card_brand AS VARCHAR) AS card_brand,
    CAST(captured_at AS TIMESTAMP) AS captured_at,
    CAST(captured_at AS DATE) AS capture_date
FROM captures
ORDER BY captured_at, capture_id
