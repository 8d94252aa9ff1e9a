SELECT CAST(meter_id AS VARCHAR) AS meter_id,
       CAST(date_trunc('hour', measured_at) AS TIMESTAMP) AS hour,
       CAST(count(*) AS BIGINT) AS samples,
       CAST(avg(power_kw) AS DOUBLE) AS avg_kw,
       CAST(min(power_kw) AS DOUBLE) AS min_kw,
       CAST(max(power_kw) AS DOUBLE) AS max_kw
FROM power_samples
GROUP BY meter_id, date_trunc('hour', measured_at)
ORDER BY meter_id, hour
