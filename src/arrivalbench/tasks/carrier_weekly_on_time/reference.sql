SELECT
    carrier,
    CAST(date_trunc('week', delivered_at) AS DATE)                          AS week,
    count(*)                                                                AS deliveries,
    count(*) FILTER (WHERE CAST(delivered_at AS DATE) <= promised_date)     AS on_time,
    count(*) FILTER (WHERE CAST(delivered_at AS DATE) <= promised_date) / count(*) AS on_time_rate
FROM deliveries
GROUP BY carrier, CAST(date_trunc('week', delivered_at) AS DATE)
