SELECT
    click_id,
    campaign_id,
    creative_id,
    lower(trim(placement))                                   AS placement,
    CAST(cpc_micros AS DECIMAL(18,6)) / 1000000              AS cost,
    COALESCE(regexp_matches(user_agent, '(?i)bot|crawler|spider'), false) AS is_bot,
    clicked_at,
    CAST(clicked_at AS DATE)                                 AS click_date
FROM clicks
