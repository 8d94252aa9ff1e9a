-- A ping opens a shift unless the driver's previous ping is less than 45 minutes before it.
SELECT
    driver_id,
    CAST(row_number() OVER (PARTITION BY driver_id ORDER BY min(pinged_at)) AS BIGINT)
        AS shift_number,
    min(pinged_at) AS started_at,
    max(pinged_at) AS ended_at,
    CAST(count(*) AS BIGINT) AS pings
FROM (
    SELECT driver_id, pinged_at,
           sum(opens) OVER (PARTITION BY driver_id ORDER BY pinged_at, ping_id
                            ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS shift
    FROM (
        SELECT driver_id, pinged_at, ping_id,
               CASE WHEN lag(pinged_at) OVER (PARTITION BY driver_id ORDER BY pinged_at, ping_id)
                         > pinged_at - INTERVAL '45 minutes' THEN 0 ELSE 1 END AS opens
        FROM gps_pings
    ) AS flagged
) AS shifts
GROUP BY driver_id, shift
