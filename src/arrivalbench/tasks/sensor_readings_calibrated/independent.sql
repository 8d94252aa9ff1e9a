SELECT
    CAST(reading_id AS BIGINT) AS reading_id,
    CAST(sensor_id AS VARCHAR) AS sensor_id,
    CAST(metric AS VARCHAR) AS metric,
    CAST(raw_value AS DOUBLE) / 10.0 AS value,
    CAST(CASE
        WHEN raw_value IS NULL THEN 'missing'
        WHEN metric = 'temp_c' AND NOT (raw_value BETWEEN -400 AND 850) THEN 'out_of_range'
        WHEN metric = 'humidity_pct' AND NOT (raw_value BETWEEN 0 AND 1000) THEN 'out_of_range'
        ELSE 'ok'
    END AS VARCHAR) AS status,
    CAST(read_at AS TIMESTAMP) AS read_at,
    CAST(date_trunc('hour', read_at) AS TIMESTAMP) AS read_hour
FROM readings
ORDER BY reading_id
