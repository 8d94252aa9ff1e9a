WITH cur AS (
    SELECT *
    FROM subscription_changes
    QUALIFY row_number() OVER (PARTITION BY subscription_id ORDER BY version DESC, changed_at DESC, change_id DESC) = 1
),
paying AS (
    SELECT plan,
           CASE WHEN seats IS NULL THEN monthly_price ELSE monthly_price * seats END AS mrr
    FROM cur
    WHERE status IN ('active', 'past_due')
)
SELECT
    CAST(plan AS VARCHAR) AS plan,
    CAST(count(*) AS BIGINT) AS subscriptions,
    CAST(sum(mrr) AS DECIMAL(14,2)) AS mrr
FROM paying
GROUP BY plan
ORDER BY plan
