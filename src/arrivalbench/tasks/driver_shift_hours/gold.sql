-- Every delivered ping goes to pings_landing as it comes; both tables are then recomputed from
-- the landing table, one ping per id.
CREATE TABLE IF NOT EXISTS pings_landing (
    ping_id   BIGINT,
    driver_id VARCHAR,
    pinged_at TIMESTAMP,
    speed_kmh DECIMAL(5,1)
);

INSERT INTO pings_landing
SELECT ping_id, driver_id, pinged_at, speed_kmh FROM incoming.gps_pings;

DROP TABLE IF EXISTS driver_shifts;

CREATE TABLE driver_shifts AS
WITH pings AS (
    SELECT DISTINCT ON (ping_id) ping_id, driver_id, pinged_at
    FROM pings_landing
    ORDER BY ping_id
),
flagged AS (
    SELECT driver_id, pinged_at, ping_id,
           CASE WHEN lag(pinged_at) OVER (PARTITION BY driver_id ORDER BY pinged_at, ping_id)
                     > pinged_at - INTERVAL '45 minutes' THEN 0 ELSE 1 END AS opens
    FROM pings
),
grouped AS (
    SELECT driver_id, pinged_at,
           sum(opens) OVER (PARTITION BY driver_id ORDER BY pinged_at, ping_id
                            ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS shift
    FROM flagged
)
SELECT
    driver_id,
    CAST(row_number() OVER (PARTITION BY driver_id ORDER BY min(pinged_at)) AS BIGINT)
        AS shift_number,
    min(pinged_at) AS started_at,
    max(pinged_at) AS ended_at,
    CAST(count(*) AS BIGINT) AS pings
FROM grouped
GROUP BY driver_id, shift;

DROP TABLE IF EXISTS driver_daily_hours;

CREATE TABLE driver_daily_hours AS
SELECT driver_id,
       CAST(started_at AS DATE) AS day,
       CAST(count(*) AS BIGINT) AS shifts,
       CAST(floor((sum(extract(epoch FROM ended_at - started_at)) * 100 + 1800) / 3600) / 100.0
            AS DECIMAL(10,2)) AS hours
FROM driver_shifts
GROUP BY driver_id, CAST(started_at AS DATE);
