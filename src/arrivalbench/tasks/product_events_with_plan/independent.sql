WITH matched AS (
    SELECT e.event_id, p.plan, p.version,
           row_number() OVER (PARTITION BY e.event_id ORDER BY p.version DESC, p.changed_at DESC, p.change_id DESC) AS rn
    FROM product_events e
    JOIN plan_changes p
      ON p.account_id = e.account_id
     AND p.changed_at <= e.occurred_at
)
SELECT
    CAST(e.event_id AS VARCHAR) AS event_id,
    CAST(e.account_id AS INTEGER) AS account_id,
    CAST(e.user_id AS BIGINT) AS user_id,
    CAST(e.event_name AS VARCHAR) AS event_name,
    CAST(e.occurred_at AS TIMESTAMP) AS occurred_at,
    CAST(CASE WHEN m.event_id IS NULL THEN 'free' ELSE m.plan END AS VARCHAR) AS plan
FROM product_events e
LEFT JOIN matched m ON m.event_id = e.event_id AND m.rn = 1
ORDER BY e.occurred_at, e.event_id
