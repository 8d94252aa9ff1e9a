-- Negative control (incremental tier): the delta is taken from the batch as delivered, after
-- the ids counted before are removed but before its own repeats are collapsed, so a delivery
-- sent twice in one batch counts twice.
CREATE TABLE IF NOT EXISTS counted_deliveries (delivery_id BIGINT PRIMARY KEY);

CREATE TABLE IF NOT EXISTS carrier_weekly_on_time (
    carrier      TEXT,
    week         DATE,
    deliveries   BIGINT,
    on_time      BIGINT,
    on_time_rate DOUBLE PRECISION
);

-- No key list a lookup joins against is ever empty (an empty batch looks up id 0, an empty
-- delta a placeholder group), as in the DuckDB version, where an empty side of a join reads
-- the stored table whole. A placeholder group is rewritten from its own stored row, so it
-- never changes.
DROP TABLE IF EXISTS batch_ids;
CREATE TEMP TABLE batch_ids AS
SELECT delivery_id FROM incoming.deliveries
UNION ALL SELECT coalesce(min(delivery_id), 0) FROM incoming.deliveries;

DROP TABLE IF EXISTS known;
CREATE TEMP TABLE known AS
SELECT c.delivery_id FROM counted_deliveries AS c
WHERE c.delivery_id IN (SELECT delivery_id FROM batch_ids);

DROP TABLE IF EXISTS fresh;
CREATE TEMP TABLE fresh AS
SELECT delivery_id, carrier,
       CAST(date_trunc('week', delivered_at) AS DATE) AS week,
       CAST(delivered_at AS DATE) <= promised_date AS in_time
FROM incoming.deliveries
WHERE delivery_id NOT IN (SELECT delivery_id FROM known);

DROP TABLE IF EXISTS delta;
CREATE TEMP TABLE delta AS
SELECT carrier, week, count(*) AS deliveries, count(*) FILTER (WHERE in_time) AS on_time
FROM fresh
GROUP BY carrier, week;

DROP TABLE IF EXISTS group_keys;
CREATE TEMP TABLE group_keys AS
SELECT carrier, week FROM delta
UNION ALL
SELECT '', DATE '1970-01-05' WHERE NOT EXISTS (SELECT 1 FROM delta);

DROP TABLE IF EXISTS now;
CREATE TEMP TABLE now AS
SELECT carrier, week, sum(deliveries) AS deliveries, sum(on_time) AS on_time
FROM (
    SELECT t.carrier, t.week, t.deliveries, t.on_time
    FROM carrier_weekly_on_time AS t
    JOIN group_keys AS k ON t.carrier IS NOT DISTINCT FROM k.carrier AND t.week = k.week
    UNION ALL
    SELECT carrier, week, deliveries, on_time FROM delta
)
GROUP BY carrier, week;

BEGIN TRANSACTION;

INSERT INTO counted_deliveries SELECT DISTINCT delivery_id FROM fresh;

DELETE FROM carrier_weekly_on_time AS t USING group_keys AS k
WHERE t.carrier IS NOT DISTINCT FROM k.carrier AND t.week = k.week;

INSERT INTO carrier_weekly_on_time
SELECT carrier, week, deliveries, on_time, CAST(on_time AS DOUBLE PRECISION) / deliveries FROM now;

COMMIT;
