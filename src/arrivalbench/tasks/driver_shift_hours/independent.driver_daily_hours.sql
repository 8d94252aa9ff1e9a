-- Per driver and day of shift start: number of shifts and their total hours.
WITH pings AS (
    -- a ping is identified by ping_id; repeated records count once.
    -- Pings without a driver or a time cannot be placed in any shift.
    SELECT DISTINCT ON (ping_id) ping_id, driver_id, pinged_at
    FROM gps_pings
    WHERE ping_id IS NOT NULL AND driver_id IS NOT NULL AND pinged_at IS NOT NULL
    ORDER BY ping_id
),
ordered AS (
    SELECT *,
           lag(pinged_at) OVER (PARTITION BY driver_id ORDER BY pinged_at, ping_id) AS prev_pinged_at
    FROM pings
),
flagged AS (
    -- a gap of 45 minutes (2700 s) or more starts a new shift; 44:59 stays in the same shift
    SELECT *,
           CASE WHEN prev_pinged_at IS NULL
                  OR date_diff('second', prev_pinged_at, pinged_at) >= 2700
                THEN 1 ELSE 0 END AS starts_shift
    FROM ordered
),
numbered AS (
    SELECT *,
           sum(starts_shift) OVER (PARTITION BY driver_id ORDER BY pinged_at, ping_id
                                   ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS shift_seq
    FROM flagged
),
shifts AS (
    SELECT driver_id, shift_seq,
           min(pinged_at) AS started_at,
           max(pinged_at) AS ended_at
    FROM numbered
    GROUP BY driver_id, shift_seq
),
daily AS (
    -- the whole shift belongs to the calendar day of its start
    SELECT driver_id,
           CAST(started_at AS DATE) AS day,
           count(*) AS shifts,
           sum(date_diff('second', started_at, ended_at)) AS total_seconds
    FROM shifts
    GROUP BY driver_id, CAST(started_at AS DATE)
)
SELECT driver_id,
       day,
       CAST(shifts AS BIGINT) AS shifts,
       -- round the day's total (not each shift) to hundredths of an hour, half up,
       -- in exact integer arithmetic: 3618 s -> 1.01, 3617 s -> 1.00
       CAST(CAST((total_seconds * 100 + 1800) // 3600 AS DECIMAL(18,0)) / 100 AS DECIMAL(10,2)) AS hours
FROM daily
ORDER BY driver_id, day
