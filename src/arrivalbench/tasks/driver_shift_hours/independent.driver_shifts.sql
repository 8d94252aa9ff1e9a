-- One row per shift of each driver.
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
)
SELECT driver_id,
       CAST(shift_seq AS BIGINT)      AS shift_number,
       CAST(min(pinged_at) AS TIMESTAMP) AS started_at,
       CAST(max(pinged_at) AS TIMESTAMP) AS ended_at,
       CAST(count(*) AS BIGINT)       AS pings
FROM numbered
GROUP BY driver_id, shift_seq
ORDER BY driver_id, shift_number
