-- The attribution of reference.conversion_attribution.sql, summed per day and channel.
WITH conv AS (
    SELECT *, lag(converted_at) OVER (PARTITION BY user_id
                                      ORDER BY converted_at, conversion_id) AS previous_at
    FROM conversions
),
credited AS (
    SELECT c.conversion_id, t.channel,
           row_number() OVER (PARTITION BY c.conversion_id
                              ORDER BY t.touched_at DESC, t.touch_id DESC) AS n
    FROM conv AS c
    JOIN touches AS t
      ON t.user_id = c.user_id
     AND t.touched_at <= c.converted_at
     AND t.touched_at >= c.converted_at - INTERVAL 7 DAY
     AND (c.previous_at IS NULL OR t.touched_at > c.previous_at)
)
SELECT CAST(c.converted_at AS DATE) AS day, coalesce(r.channel, 'direct') AS channel,
       count(*) AS conversions, CAST(sum(c.revenue) AS DECIMAL(12,2)) AS revenue
FROM conv AS c LEFT JOIN credited AS r ON r.conversion_id = c.conversion_id AND r.n = 1
GROUP BY CAST(c.converted_at AS DATE), coalesce(r.channel, 'direct')
