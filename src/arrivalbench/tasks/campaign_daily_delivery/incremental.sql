-- Incremental: counted_events keeps the id of every event counted, keyed, so a run reads only
-- the ids its batch repeats. The batch's other events are added to the daily counters of the
-- (campaign, day) groups they fall in (spend kept in micros, so that rounding happens once, on
-- the total); only those groups are read and rewritten, in the counters and in the target.
-- Ids and counters commit together: a retried batch finds its events counted.
CREATE TABLE IF NOT EXISTS counted_events (event_id VARCHAR PRIMARY KEY);

CREATE TABLE IF NOT EXISTS campaign_daily_micros (
    campaign_id  INTEGER,
    day          DATE,
    impressions  BIGINT,
    clicks       BIGINT,
    conversions  BIGINT,
    spend_micros HUGEINT,
    PRIMARY KEY (campaign_id, day)
);

CREATE TABLE IF NOT EXISTS campaign_daily (
    campaign_id INTEGER,
    day         DATE,
    impressions BIGINT,
    clicks      BIGINT,
    conversions BIGINT,
    spend       DECIMAL(12,2),
    PRIMARY KEY (campaign_id, day)
);

-- No key list a lookup joins against is ever empty (an empty one holds a placeholder key):
-- DuckDB pushes the keys of a join's small side into the scan of the stored table, but from an
-- empty side it pushes nothing and reads the table whole. A placeholder group is rewritten
-- from its own stored row, so it never changes.
CREATE OR REPLACE TEMP TABLE batch_ids AS
SELECT event_id FROM incoming.ad_events
UNION ALL SELECT coalesce(min(event_id), '') FROM incoming.ad_events;

CREATE OR REPLACE TEMP TABLE known AS
SELECT c.event_id FROM counted_events AS c WHERE c.event_id IN (SELECT event_id FROM batch_ids);

CREATE OR REPLACE TEMP TABLE fresh AS
SELECT DISTINCT ON (event_id) event_id, campaign_id, event_type, cost_micros,
       CAST(occurred_at AS DATE) AS day
FROM incoming.ad_events
WHERE event_id NOT IN (SELECT event_id FROM known)
ORDER BY event_id;

CREATE OR REPLACE TEMP TABLE delta AS
SELECT campaign_id, day,
       count(*) FILTER (WHERE event_type = 'impression') AS impressions,
       count(*) FILTER (WHERE event_type = 'click')      AS clicks,
       count(*) FILTER (WHERE event_type = 'conversion') AS conversions,
       COALESCE(sum(cost_micros), 0)                     AS spend_micros
FROM fresh
GROUP BY campaign_id, day;

CREATE OR REPLACE TEMP TABLE group_keys AS
SELECT campaign_id, day FROM delta
UNION ALL
SELECT 0, DATE '1970-01-01' WHERE NOT EXISTS (SELECT 1 FROM delta);

CREATE OR REPLACE TEMP TABLE stored AS
SELECT m.* FROM campaign_daily_micros AS m
JOIN group_keys AS k ON m.campaign_id = k.campaign_id AND m.day = k.day;

CREATE OR REPLACE TEMP TABLE now AS
SELECT campaign_id, day,
       sum(impressions) AS impressions, sum(clicks) AS clicks,
       sum(conversions) AS conversions, sum(spend_micros) AS spend_micros
FROM (SELECT * FROM stored UNION ALL SELECT * FROM delta)
GROUP BY campaign_id, day;

BEGIN TRANSACTION;

INSERT INTO counted_events SELECT event_id FROM fresh;

DELETE FROM campaign_daily_micros AS m USING group_keys AS k
WHERE m.campaign_id = k.campaign_id AND m.day = k.day;

INSERT INTO campaign_daily_micros SELECT * FROM now;

DELETE FROM campaign_daily AS t USING group_keys AS k
WHERE t.campaign_id = k.campaign_id AND t.day = k.day;

INSERT INTO campaign_daily
SELECT campaign_id, day, impressions, clicks, conversions,
       CAST(round(spend_micros / 1000000.0, 2) AS DECIMAL(12,2))
FROM now;

COMMIT;
