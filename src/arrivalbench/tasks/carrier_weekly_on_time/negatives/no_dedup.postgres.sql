-- Keep every delivery delivered; the (carrier, week) groups the batch touches are deleted and
-- inserted again from the history (an empty carrier is a group too: IS NOT DISTINCT FROM).
CREATE TABLE IF NOT EXISTS delivery_history (
    delivery_id   BIGINT,
    carrier       TEXT,
    region        TEXT,
    promised_date DATE,
    delivered_at  TIMESTAMP
);

CREATE TABLE IF NOT EXISTS carrier_weekly_on_time (
    carrier      TEXT,
    week         DATE,
    deliveries   BIGINT,
    on_time      BIGINT,
    on_time_rate DOUBLE PRECISION
);

INSERT INTO delivery_history
SELECT delivery_id, carrier, region, promised_date, delivered_at
FROM incoming.deliveries;

CREATE TEMP TABLE touched AS
SELECT DISTINCT carrier, CAST(date_trunc('week', delivered_at) AS DATE) AS week
FROM incoming.deliveries;

DELETE FROM carrier_weekly_on_time AS c
WHERE EXISTS (SELECT 1 FROM touched AS t
              WHERE t.carrier IS NOT DISTINCT FROM c.carrier AND t.week = c.week);

INSERT INTO carrier_weekly_on_time
SELECT
    h.carrier,
    CAST(date_trunc('week', h.delivered_at) AS DATE),
    count(*),
    count(*) FILTER (WHERE CAST(h.delivered_at AS DATE) <= h.promised_date),
    CAST(count(*) FILTER (WHERE CAST(h.delivered_at AS DATE) <= h.promised_date)
         AS DOUBLE PRECISION) / count(*)
FROM delivery_history AS h
JOIN touched AS t
  ON t.carrier IS NOT DISTINCT FROM h.carrier
 AND t.week = CAST(date_trunc('week', h.delivered_at) AS DATE)
GROUP BY h.carrier, CAST(date_trunc('week', h.delivered_at) AS DATE);
