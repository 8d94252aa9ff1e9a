SELECT
    plan,
    count(*)                                         AS subscriptions,
    sum(monthly_price * COALESCE(seats, 1))          AS mrr
FROM (
    SELECT * FROM subscription_changes
    QUALIFY row_number() OVER (PARTITION BY subscription_id ORDER BY version DESC) = 1
)
WHERE status IN ('active', 'past_due')
GROUP BY plan
