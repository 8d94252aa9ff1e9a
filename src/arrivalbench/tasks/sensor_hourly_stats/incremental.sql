-- Incremental: deltas applied by key. The sample ids counted so far are kept in a registry
-- keyed (indexed) on the id, and hour_state keeps per (meter, hour), under one indexed key, the
-- sample count, the count and sum of values and their minimum and maximum. A run looks up only
-- the ids its batch carries, folds the samples not seen before into the state of just the
-- hours they fall in and rewrites just those rows of the target; one transaction, so a retried
-- batch adds nothing twice.
-- DuckDB reads the whole stored side of a join whose other side ends up empty, so the registry
-- and the state hold one sentinel row each that every lookup also asks for, and target rows are
-- deleted only for hours known to be stored.
BEGIN TRANSACTION;

-- Created with their sentinel rows, once (the statements do nothing when the tables exist).
CREATE TABLE IF NOT EXISTS sample_ids AS SELECT -1::BIGINT AS sample_id;
CREATE UNIQUE INDEX IF NOT EXISTS sample_ids_id ON sample_ids (sample_id);

CREATE TABLE IF NOT EXISTS hour_state AS
SELECT ''::VARCHAR AS hour_key, NULL::VARCHAR AS meter_id, NULL::TIMESTAMP AS hour,
       NULL::BIGINT AS samples, NULL::BIGINT AS valued, NULL::DOUBLE AS sum_kw,
       NULL::DOUBLE AS min_kw, NULL::DOUBLE AS max_kw;
CREATE UNIQUE INDEX IF NOT EXISTS hour_state_key ON hour_state (hour_key);

CREATE TABLE IF NOT EXISTS meter_hourly_power (
    meter_id VARCHAR,
    hour     TIMESTAMP,
    samples  BIGINT,
    avg_kw   DOUBLE,
    min_kw   DOUBLE,
    max_kw   DOUBLE
);
CREATE INDEX IF NOT EXISTS meter_hourly_power_hour ON meter_hourly_power (hour);

CREATE OR REPLACE TEMP TABLE known AS
SELECT k.sample_id FROM sample_ids AS k
WHERE k.sample_id IN (SELECT sample_id FROM incoming.power_samples UNION ALL SELECT -1);

CREATE OR REPLACE TEMP TABLE fresh AS
SELECT DISTINCT ON (sample_id) sample_id, meter_id, power_kw, measured_at
FROM incoming.power_samples
WHERE sample_id NOT IN (SELECT sample_id FROM known)
ORDER BY sample_id;

INSERT INTO sample_ids SELECT sample_id FROM fresh;

CREATE OR REPLACE TEMP TABLE delta AS
SELECT
    meter_id || '|' || date_trunc('hour', measured_at) AS hour_key,
    meter_id,
    date_trunc('hour', measured_at) AS hour,
    count(*) AS samples,
    count(power_kw) AS valued,
    sum(power_kw) AS sum_kw,
    min(power_kw) AS min_kw,
    max(power_kw) AS max_kw
FROM fresh
GROUP BY ALL;

CREATE OR REPLACE TEMP TABLE stored AS
SELECT s.* FROM hour_state AS s
WHERE s.hour_key IN (SELECT hour_key FROM delta UNION ALL SELECT '');
DELETE FROM stored WHERE hour_key = '';

CREATE OR REPLACE TEMP TABLE updated AS
SELECT
    d.hour_key, d.meter_id, d.hour,
    d.samples + coalesce(s.samples, 0) AS samples,
    d.valued + coalesce(s.valued, 0) AS valued,
    CASE WHEN d.valued + coalesce(s.valued, 0) > 0
         THEN coalesce(d.sum_kw, 0) + coalesce(s.sum_kw, 0) END AS sum_kw,
    least(d.min_kw, s.min_kw) AS min_kw,
    greatest(d.max_kw, s.max_kw) AS max_kw
FROM delta AS d LEFT JOIN stored AS s USING (hour_key);

-- The sentinel goes with the stored rows (never an empty lookup) and comes back.
DELETE FROM hour_state
WHERE hour_key IN (SELECT hour_key FROM stored UNION ALL SELECT '');

INSERT INTO hour_state
SELECT * FROM updated UNION ALL SELECT '', NULL, NULL, NULL, NULL, NULL, NULL, NULL;

DELETE FROM meter_hourly_power AS m
USING stored AS s
WHERE m.meter_id = s.meter_id AND m.hour = s.hour
  AND m.hour IN (SELECT hour FROM stored UNION ALL SELECT TIMESTAMP '0001-01-01 00:00:00');

INSERT INTO meter_hourly_power
SELECT meter_id, hour, samples, sum_kw / nullif(valued, 0), min_kw, max_kw FROM updated;

DROP TABLE updated;
DROP TABLE stored;
DROP TABLE delta;
DROP TABLE fresh;
DROP TABLE known;

COMMIT;
