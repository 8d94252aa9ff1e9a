WITH daily AS (
  SELECT
    campaign_id,
    CAST(occurred_at AS DATE) AS day,
    COUNT(*) FILTER (WHERE event_type = 'impression') AS impressions,
    COUNT(*) FILTER (WHERE event_type = 'click') AS clicks,
    COUNT(*) FILTER (WHERE event_type = 'conversion') AS conversions,
    COALESCE(SUM(cost_micros), 0) AS spend_micros
  FROM ad_events
  GROUP BY campaign_id, CAST(occurred_at AS DATE)
)
SELECT
  CAST(campaign_id AS INTEGER) AS campaign_id,
  CAST(day AS DATE) AS day,
  CAST(impressions AS BIGINT) AS impressions,
  CAST(clicks AS BIGINT) AS clicks,
  CAST(conversions AS BIGINT) AS conversions,
  CAST(ROUND(CAST(spend_micros AS DECIMAL(38,0)) * CAST(0.000001 AS DECIMAL(7,6)), 2) AS DECIMAL(12,2)) AS spend
FROM daily
