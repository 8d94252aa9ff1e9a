SELECT
    click_id,
    campaign_id,
    creative_id,
    lower(trim(placement)) AS placement,
    CAST(CAST(cpc_micros AS DECIMAL(18,0)) * CAST(0.000001 AS DECIMAL(7,6)) AS DECIMAL(12,6)) AS cost,
    COALESCE(regexp_matches(lower(user_agent), 'bot|crawler|spider'), false) AS is_bot,
    clicked_at,
    CAST(clicked_at AS DATE) AS click_date
FROM clicks
