-- One row per capture, amounts in major units.
SELECT
    capture_id,
    payment_intent,
    merchant_id,
    upper(currency)                                   AS currency,
    CAST(CASE WHEN upper(currency) IN ('JPY', 'KRW') THEN amount_minor
              ELSE amount_minor / 100 END AS DECIMAL(14,2)) AS amount,
    card_brand,
    captured_at,
    CAST(captured_at AS DATE)                         AS capture_date
FROM captures
