-- The current address of every active customer: each customer's highest version, unless it
-- closes the account.
SELECT
    CAST(customer_id AS INTEGER)  AS customer_id,
    CAST(street AS VARCHAR)       AS street,
    CAST(unit AS VARCHAR)         AS unit,
    CAST(city AS VARCHAR)         AS city,
    CAST(postal_code AS VARCHAR)  AS postal_code,
    CAST(country AS VARCHAR)      AS country,
    CAST(updated_at AS TIMESTAMP) AS updated_at
FROM (
    SELECT
        c.*,
        row_number() OVER (PARTITION BY customer_id ORDER BY version DESC) AS rn
    FROM customer_changes AS c
) AS latest
WHERE rn = 1
  AND op = 'upsert'
