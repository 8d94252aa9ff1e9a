SELECT
    CAST(carrier AS VARCHAR) AS carrier,
    CAST(date_trunc('week', delivered_at) AS DATE) AS week,
    CAST(count(*) AS BIGINT) AS deliveries,
    CAST(count(*) FILTER (WHERE CAST(delivered_at AS DATE) <= promised_date) AS BIGINT) AS on_time,
    CAST(count(*) FILTER (WHERE CAST(delivered_at AS DATE) <= promised_date) AS DOUBLE) / count(*) AS on_time_rate
FROM deliveries
GROUP BY carrier, CAST(date_trunc('week', delivered_at) AS DATE)
ORDER BY week, carrier
