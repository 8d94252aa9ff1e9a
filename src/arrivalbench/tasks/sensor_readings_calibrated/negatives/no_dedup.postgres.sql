-- Land every delivered reading, then rebuild the target from the landing table.
CREATE TABLE IF NOT EXISTS readings_landing (
    reading_id BIGINT,
    sensor_id  VARCHAR,
    metric     VARCHAR,
    raw_value  INTEGER,
    read_at    TIMESTAMP
);

INSERT INTO readings_landing (reading_id, sensor_id, metric, raw_value, read_at)
SELECT reading_id, sensor_id, metric, raw_value, read_at
FROM incoming.readings;

DROP TABLE IF EXISTS sensor_readings;

CREATE TABLE sensor_readings AS
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
FROM readings_landing;
