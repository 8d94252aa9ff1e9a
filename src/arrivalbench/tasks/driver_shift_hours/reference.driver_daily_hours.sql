-- The shifts as in driver_shifts, summed per driver and start day; the total seconds are
-- rounded to hundredths of an hour half up.
WITH shifts AS (
    SELECT driver_id, min(pinged_at) AS started_at, max(pinged_at) AS ended_at
    FROM (
        SELECT driver_id, pinged_at,
               sum(opens) OVER (PARTITION BY driver_id ORDER BY pinged_at, ping_id
                                ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS shift
        FROM (
            SELECT driver_id, pinged_at, ping_id,
                   CASE WHEN lag(pinged_at) OVER (PARTITION BY driver_id
                                                  ORDER BY pinged_at, ping_id)
                             > pinged_at - INTERVAL '45 minutes' THEN 0 ELSE 1 END AS opens
            FROM gps_pings
        ) AS flagged
    ) AS grouped
    GROUP BY driver_id, shift
)
SELECT driver_id,
       CAST(started_at AS DATE) AS day,
       CAST(count(*) AS BIGINT) AS shifts,
       CAST(floor((sum(extract(epoch FROM ended_at - started_at)) * 100 + 1800) / 3600) / 100.0
            AS DECIMAL(10,2)) AS hours
FROM shifts
GROUP BY driver_id, CAST(started_at AS DATE)
