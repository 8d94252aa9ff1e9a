-- Add each delivery's events to the daily counters.
CREATE TABLE IF NOT EXISTS campaign_daily_micros (
    campaign_id INTEGER,
    day         DATE,
    impressions BIGINT,
    clicks      BIGINT,
    conversions BIGINT,
    spend_micros NUMERIC,
    PRIMARY KEY (campaign_id, day)
);

INSERT INTO campaign_daily_micros AS t
SELECT
    campaign_id,
    CAST(occurred_at AS DATE),
    count(*) FILTER (WHERE event_type = 'impression'),
    count(*) FILTER (WHERE event_type = 'click'),
    count(*) FILTER (WHERE event_type = 'conversion'),
    COALESCE(sum(cost_micros), 0)
FROM incoming.ad_events
GROUP BY campaign_id, CAST(occurred_at AS DATE)
ON CONFLICT (campaign_id, day) DO UPDATE SET
    impressions  = t.impressions + EXCLUDED.impressions,
    clicks       = t.clicks + EXCLUDED.clicks,
    conversions  = t.conversions + EXCLUDED.conversions,
    spend_micros = t.spend_micros + EXCLUDED.spend_micros;

DROP TABLE IF EXISTS campaign_daily;

CREATE TABLE campaign_daily AS
SELECT campaign_id, day, impressions, clicks, conversions,
       -- The reference divides in double precision and rounds that double: a total ending in
       -- half a cent goes down when the nearest double lies below it, which is so when the
       -- total, counted in units of the last place (2^(e-52)), rounds down to a whole number.
       CAST(CASE WHEN mod(abs(spend_micros), 10000) <> 5000
                 THEN round(spend_micros / 1000000.0, 2)
                 WHEN round(abs(spend_micros) / 1000000.0 * power(2::numeric, 52 - floor(log(2, abs(spend_micros) / 1000000.0))))
                      < abs(spend_micros) / 1000000.0 * power(2::numeric, 52 - floor(log(2, abs(spend_micros) / 1000000.0)))
                 THEN trunc(spend_micros / 1000000.0, 2)
                 ELSE round(spend_micros / 1000000.0, 2) END AS DECIMAL(12,2)) AS spend
FROM campaign_daily_micros;
