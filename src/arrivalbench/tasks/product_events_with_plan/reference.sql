SELECT
    e.event_id,
    e.account_id,
    e.user_id,
    e.event_name,
    e.occurred_at,
    COALESCE(c.plan, 'free') AS plan
FROM product_events AS e
LEFT JOIN plan_changes AS c
  ON c.account_id = e.account_id AND c.changed_at <= e.occurred_at
QUALIFY row_number() OVER (PARTITION BY e.event_id ORDER BY c.version DESC NULLS LAST) = 1
