WITH
-- a record may be delivered several times with identical content: keep one copy
conversions_distinct AS (
    SELECT DISTINCT conversion_id, user_id, revenue, converted_at
    FROM conversions
),
touches_distinct AS (
    SELECT DISTINCT touch_id, user_id, channel, touched_at
    FROM touches
),
-- per user, conversions in (time, conversion id) order; remember the previous one's time
conversions_with_prev AS (
    SELECT
        c.*,
        lag(c.converted_at) OVER (
            PARTITION BY c.user_id
            ORDER BY c.converted_at, c.conversion_id
        ) AS prev_converted_at
    FROM conversions_distinct c
),
-- eligible touches: same user, at/before the conversion, at most 7 days before (inclusive),
-- strictly after the previous conversion of that user (if any)
eligible_touches AS (
    SELECT
        c.conversion_id,
        t.touch_id,
        t.channel,
        row_number() OVER (
            PARTITION BY c.conversion_id
            ORDER BY t.touched_at DESC, t.touch_id DESC   -- latest touch; same second -> higher id
        ) AS rn
    FROM conversions_with_prev c
    JOIN touches_distinct t
      ON  t.user_id = c.user_id
      AND t.touched_at <= c.converted_at
      AND t.touched_at >= c.converted_at - INTERVAL 7 DAY
      AND (c.prev_converted_at IS NULL OR t.touched_at > c.prev_converted_at)
),
credited_touch AS (
    SELECT conversion_id, touch_id, channel
    FROM eligible_touches
    WHERE rn = 1
),
-- one row per conversion with its credited channel
attribution AS (
    SELECT
        c.conversion_id::BIGINT          AS conversion_id,
        c.user_id::BIGINT                AS user_id,
        c.converted_at::TIMESTAMP        AS converted_at,
        c.revenue::DECIMAL(10,2)         AS revenue,
        ct.touch_id::BIGINT              AS touch_id,
        -- no eligible touch -> 'direct', no touch id
        (CASE WHEN ct.conversion_id IS NULL THEN 'direct' ELSE ct.channel END)::VARCHAR AS channel
    FROM conversions_with_prev c
    LEFT JOIN credited_touch ct ON ct.conversion_id = c.conversion_id
)
SELECT
    converted_at::DATE                AS day,
    channel::VARCHAR                  AS channel,
    count(*)::BIGINT                  AS conversions,
    sum(revenue)::DECIMAL(12,2)       AS revenue
FROM attribution
GROUP BY converted_at::DATE, channel
