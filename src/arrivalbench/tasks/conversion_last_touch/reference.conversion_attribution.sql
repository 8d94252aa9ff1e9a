-- A conversion takes the latest touch of its user at or before it, at most 7 days before it
-- and after the user's previous conversion; no such touch: 'direct'.
WITH conv AS (
    SELECT *, lag(converted_at) OVER (PARTITION BY user_id
                                      ORDER BY converted_at, conversion_id) AS previous_at
    FROM conversions
),
credited AS (
    SELECT c.conversion_id, t.touch_id, t.channel,
           row_number() OVER (PARTITION BY c.conversion_id
                              ORDER BY t.touched_at DESC, t.touch_id DESC) AS n
    FROM conv AS c
    JOIN touches AS t
      ON t.user_id = c.user_id
     AND t.touched_at <= c.converted_at
     AND t.touched_at >= c.converted_at - INTERVAL 7 DAY
     AND (c.previous_at IS NULL OR t.touched_at > c.previous_at)
)
SELECT c.conversion_id, c.user_id, c.converted_at, c.revenue, r.touch_id,
       coalesce(r.channel, 'direct') AS channel
FROM conv AS c LEFT JOIN credited AS r ON r.conversion_id = c.conversion_id AND r.n = 1
