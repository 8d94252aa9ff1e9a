SELECT campaign_id, name, status, daily_budget, bid_strategy, end_date, version
FROM campaign_changes
QUALIFY row_number() OVER (PARTITION BY campaign_id ORDER BY version DESC) = 1
    AND status <> 'archived'
