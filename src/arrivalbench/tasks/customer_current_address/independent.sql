WITH ranked AS (
    SELECT *,
           row_number() OVER (PARTITION BY customer_id ORDER BY version DESC, updated_at DESC, change_id DESC) AS rn
    FROM customer_changes
)
SELECT
    CAST(customer_id AS INTEGER) AS customer_id,
    CAST(street AS VARCHAR) AS street,
    CAST(unit AS VARCHAR) AS unit,
    CAST(city AS VARCHAR) AS city,
    CAST(postal_code AS VARCHAR) AS postal_code,
    CAST(country AS VARCHAR) AS country,
    CAST(updated_at AS TIMESTAMP) AS updated_at
FROM ranked
WHERE rn = 1
  AND op = 'upsert'
ORDER BY customer_id
