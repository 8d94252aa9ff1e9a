SELECT
    reading_id,
    sensor_id,
    metric,
    raw_value / 10.0 AS value,
    CASE
        WHEN raw_value IS NULL THEN 'missing'
        WHEN metric = 'temp_c' AND raw_value / 10.0 NOT BETWEEN -40 AND 85 THEN 'out_of_range'
        WHEN metric = 'humidity_pct' AND raw_value / 10.0 NOT BETWEEN 0 AND 100 THEN 'out_of_range'
        ELSE 'ok'
    END AS status,
    read_at,
    date_trunc('hour', read_at) AS read_hour
FROM readings
