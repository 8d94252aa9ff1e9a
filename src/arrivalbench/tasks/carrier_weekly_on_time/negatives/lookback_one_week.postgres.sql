-- Keep every delivery once. Each run refreshes the current week and the week before from the
-- history, and adds weeks the table has not seen yet; older weeks are closed.
CREATE TABLE IF NOT EXISTS delivery_history (
    delivery_id   BIGINT PRIMARY KEY,
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
SELECT DISTINCT delivery_id, carrier, region, promised_date, delivered_at
FROM incoming.deliveries
ON CONFLICT DO NOTHING;

CREATE TEMP TABLE refresh AS
SELECT DISTINCT h.carrier, CAST(date_trunc('week', h.delivered_at) AS DATE) AS week
FROM delivery_history AS h
WHERE CAST(date_trunc('week', h.delivered_at) AS DATE) >=
      (SELECT CAST(date_trunc('week', max(delivered_at)) AS DATE) - INTERVAL '7 days'
       FROM delivery_history)
   OR NOT EXISTS (SELECT 1 FROM carrier_weekly_on_time AS c
                  WHERE c.carrier IS NOT DISTINCT FROM h.carrier
                    AND c.week = CAST(date_trunc('week', h.delivered_at) AS DATE));

DELETE FROM carrier_weekly_on_time AS c
WHERE EXISTS (SELECT 1 FROM refresh AS r
              WHERE r.carrier IS NOT DISTINCT FROM c.carrier AND r.week = c.week);

INSERT INTO carrier_weekly_on_time
SELECT
    h.carrier,
    CAST(date_trunc('week', h.delivered_at) AS DATE),
    count(*),
    count(*) FILTER (WHERE CAST(h.delivered_at AS DATE) <= h.promised_date),
    CAST(count(*) FILTER (WHERE CAST(h.delivered_at AS DATE) <= h.promised_date)
         AS DOUBLE PRECISION) / count(*)
FROM delivery_history AS h
JOIN refresh AS r
  ON r.carrier IS NOT DISTINCT FROM h.carrier
 AND r.week = CAST(date_trunc('week', h.delivered_at) AS DATE)
GROUP BY h.carrier, CAST(date_trunc('week', h.delivered_at) AS DATE);
