-- Land a raw copy of every delivered reading with the feed's own columns, then rebuild the
-- target from the landing table, one row per reading id.
CREATE TABLE IF NOT EXISTS readings_landing AS
SELECT * FROM incoming.readings LIMIT 0;

INSERT INTO readings_landing
SELECT * FROM incoming.readings;

DROP TABLE IF EXISTS sensor_readings;

CREATE TABLE sensor_readings AS
WITH readings AS (
    SELECT *, row_number() OVER (PARTITION BY reading_id ORDER BY read_at) AS rn
    FROM readings_landing
)
SELECT
    reading_id,
    sensor_id,
    metric,
    -- a DOUBLE as in DuckDB, where dividing by 10.0 gives one
    CAST(raw_value AS DOUBLE PRECISION) / 10 AS value,
    CASE
        WHEN raw_value IS NULL THEN 'missing'
        WHEN metric = 'temp_c' AND raw_value / 10.0 NOT BETWEEN -40 AND 85 THEN 'out_of_range'
        WHEN metric = 'humidity_pct' AND raw_value / 10.0 NOT BETWEEN 0 AND 100 THEN 'out_of_range'
        ELSE 'ok'
    END AS status,
    read_at,
    date_trunc('hour', read_at) AS read_hour
FROM readings
WHERE rn = 1;
