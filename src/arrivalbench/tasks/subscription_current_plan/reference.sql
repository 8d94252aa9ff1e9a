SELECT subscription_id, plan, seats, status, version, updated_at
FROM subscription_events
QUALIFY row_number() OVER (PARTITION BY subscription_id ORDER BY version DESC) = 1
