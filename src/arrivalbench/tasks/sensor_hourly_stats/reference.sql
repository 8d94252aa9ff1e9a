SELECT
    meter_id,
    date_trunc('hour', measured_at) AS hour,
    count(*)                        AS samples,
    avg(power_kw)                   AS avg_kw,
    min(power_kw)                   AS min_kw,
    max(power_kw)                   AS max_kw
FROM power_samples
GROUP BY meter_id, date_trunc('hour', measured_at)
