SELECT
    campaign_id,
    CAST(occurred_at AS DATE)                                        AS day,
    count(*) FILTER (WHERE event_type = 'impression')                AS impressions,
    count(*) FILTER (WHERE event_type = 'click')                     AS clicks,
    count(*) FILTER (WHERE event_type = 'conversion')                AS conversions,
    CAST(round(COALESCE(sum(cost_micros), 0) / 1000000.0, 2) AS DECIMAL(12,2)) AS spend
FROM ad_events
GROUP BY campaign_id, CAST(occurred_at AS DATE)
