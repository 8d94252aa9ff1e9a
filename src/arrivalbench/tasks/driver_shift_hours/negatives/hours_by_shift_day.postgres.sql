-- The shifts of a driver with new pings are chained again and numbered again; the day rows
-- summed again are those of the days the new pings' shifts start on.
CREATE TABLE IF NOT EXISTS driver_shifts (
    driver_id    VARCHAR,
    shift_number BIGINT,
    started_at   TIMESTAMP,
    ended_at     TIMESTAMP,
    pings        BIGINT
);

CREATE TABLE IF NOT EXISTS driver_daily_hours (
    driver_id VARCHAR,
    day       DATE,
    shifts    BIGINT,
    hours     DECIMAL(10,2)
);

CREATE TABLE IF NOT EXISTS seen_pings (ping_id BIGINT PRIMARY KEY);

-- No key list a lookup joins against is ever empty (an empty one holds a placeholder key):
-- from an empty side DuckDB pushes no keys into the scan of the stored table and reads it whole.
CREATE TEMP TABLE batch_ids AS
SELECT ping_id FROM incoming.gps_pings
UNION ALL SELECT coalesce(min(ping_id), 0) FROM incoming.gps_pings;

CREATE TEMP TABLE known AS
SELECT s.ping_id FROM seen_pings AS s
WHERE s.ping_id IN (SELECT ping_id FROM batch_ids);

CREATE TEMP TABLE fresh AS
SELECT DISTINCT ON (ping_id) ping_id, driver_id, pinged_at
FROM incoming.gps_pings
WHERE ping_id NOT IN (SELECT ping_id FROM known)
ORDER BY ping_id;

CREATE TEMP TABLE driver_keys AS
SELECT DISTINCT driver_id FROM fresh
UNION ALL SELECT coalesce(min(driver_id), '') FROM fresh;

CREATE TEMP TABLE pieces AS
SELECT s.driver_id, s.started_at, s.ended_at, s.pings
FROM driver_shifts AS s
WHERE s.driver_id IN (SELECT driver_id FROM driver_keys)
UNION ALL
SELECT driver_id, pinged_at, pinged_at, 1 FROM fresh;

-- A piece opens a new shift unless some piece before it ends less than 45 minutes before it
-- starts.
CREATE TEMP TABLE chained AS
SELECT driver_id, started_at, ended_at, pings,
       sum(opens) OVER (PARTITION BY driver_id ORDER BY started_at, ended_at
                        ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS shift
FROM (
    SELECT driver_id, started_at, ended_at, pings,
           CASE WHEN max(ended_at) OVER (PARTITION BY driver_id ORDER BY started_at, ended_at
                                         ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
                     > started_at - INTERVAL '45 minutes' THEN 0 ELSE 1 END AS opens
    FROM pieces
) AS flagged;

CREATE TEMP TABLE rebuilt AS
SELECT driver_id,
       CAST(row_number() OVER (PARTITION BY driver_id ORDER BY min(started_at)) AS BIGINT)
           AS shift_number,
       min(started_at) AS started_at,
       max(ended_at) AS ended_at,
       CAST(sum(pings) AS BIGINT) AS pings
FROM chained
GROUP BY driver_id, shift;

CREATE TEMP TABLE rebuilt_days AS
SELECT driver_id,
       CAST(started_at AS DATE) AS day,
       CAST(count(*) AS BIGINT) AS shifts,
       CAST(floor((sum(extract(epoch FROM ended_at - started_at)) * 100 + 1800) / 3600) / 100.0
            AS DECIMAL(10,2)) AS hours
FROM rebuilt
GROUP BY driver_id, CAST(started_at AS DATE);

-- The days the batch's pings fall in: the start days of the shifts that hold them now.
CREATE TEMP TABLE day_keys AS
SELECT DISTINCT r.driver_id, CAST(r.started_at AS DATE) AS day
FROM rebuilt AS r JOIN fresh AS f
  ON f.driver_id = r.driver_id AND f.pinged_at BETWEEN r.started_at AND r.ended_at;

BEGIN TRANSACTION;

DELETE FROM driver_shifts
WHERE driver_id IN (SELECT driver_id FROM driver_keys)
  AND driver_id IN (SELECT driver_id FROM fresh);

INSERT INTO driver_shifts
SELECT driver_id, shift_number, started_at, ended_at, pings FROM rebuilt;

DELETE FROM driver_daily_hours
WHERE (driver_id, day) IN (SELECT driver_id, day FROM day_keys);

INSERT INTO driver_daily_hours
SELECT driver_id, day, shifts, hours FROM rebuilt_days
WHERE (driver_id, day) IN (SELECT driver_id, day FROM day_keys);

INSERT INTO seen_pings SELECT ping_id FROM fresh;

COMMIT;
