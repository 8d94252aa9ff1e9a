-- Keep the events once per id, loading only those at or after the newest event kept (an
-- incremental load by event time); recompute the daily report from them.
CREATE TABLE IF NOT EXISTS event_history (
    event_id    TEXT PRIMARY KEY,
    campaign_id INTEGER,
    event_type  TEXT,
    cost_micros BIGINT,
    occurred_at TIMESTAMP
);

INSERT INTO event_history
SELECT DISTINCT event_id, campaign_id, event_type, cost_micros, occurred_at
FROM incoming.ad_events
WHERE occurred_at >= (SELECT COALESCE(max(occurred_at), TIMESTAMP '1970-01-01')
                      FROM event_history)
ON CONFLICT DO NOTHING;

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
FROM (
    SELECT
        campaign_id,
        CAST(occurred_at AS DATE)                                        AS day,
        count(*) FILTER (WHERE event_type = 'impression')                AS impressions,
        count(*) FILTER (WHERE event_type = 'click')                     AS clicks,
        count(*) FILTER (WHERE event_type = 'conversion')                AS conversions,
        COALESCE(sum(cost_micros), 0)                                    AS spend_micros
    FROM event_history
    GROUP BY campaign_id, CAST(occurred_at AS DATE)
) AS daily;
