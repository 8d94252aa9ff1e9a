WITH cur AS (
  SELECT *,
         row_number() OVER (PARTITION BY subscription_id ORDER BY version DESC) AS rn
  FROM subscription_events
)
SELECT CAST(subscription_id AS INTEGER) AS subscription_id,
       CAST(plan AS VARCHAR) AS plan,
       CAST(seats AS INTEGER) AS seats,
       CAST(status AS VARCHAR) AS status,
       CAST(version AS INTEGER) AS version,
       CAST(updated_at AS TIMESTAMP) AS updated_at
FROM cur
WHERE rn = 1
ORDER BY subscription_id
