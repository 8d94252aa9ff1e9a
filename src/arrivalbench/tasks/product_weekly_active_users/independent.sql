-- Written from the ticket alone: every product is spread over a calendar of days from its first
-- event to six days after its last one; each calendar day counts the distinct users of the
-- seven-day range ending on it by a range join, and days with no user in range are dropped.
WITH usage AS (
    SELECT product, user_id, CAST(occurred_at AS DATE) AS d, event_id
    FROM product_events
),
user_days AS (
    SELECT DISTINCT product, user_id, d FROM usage
),
firsts AS (
    SELECT product, user_id, min(d) AS first_d FROM user_days GROUP BY product, user_id
),
calendar AS (
    SELECT product, CAST(g.day AS DATE) AS day
    FROM (SELECT product, min(d) AS lo, max(d) + 6 AS hi FROM user_days GROUP BY product) AS b,
         generate_series(CAST(b.lo AS TIMESTAMP), CAST(b.hi AS TIMESTAMP), INTERVAL 1 DAY)
             AS g (day)
),
weekly AS (
    SELECT c.product, c.day, count(DISTINCT u.user_id) AS wau
    FROM calendar AS c
    JOIN user_days AS u ON u.product = c.product AND u.d BETWEEN c.day - 6 AND c.day
    GROUP BY c.product, c.day
),
daily AS (
    SELECT product, d, count(DISTINCT user_id) AS dau, count(*) AS n
    FROM usage GROUP BY product, d
),
fresh_users AS (
    SELECT product, first_d, count(*) AS n FROM firsts GROUP BY product, first_d
)
SELECT w.product, w.day,
       coalesce(daily.dau, 0) AS active_users,
       w.wau AS weekly_active_users,
       coalesce(fresh_users.n, 0) AS new_users,
       coalesce(daily.n, 0) AS events
FROM weekly AS w
LEFT JOIN daily ON daily.product = w.product AND daily.d = w.day
LEFT JOIN fresh_users ON fresh_users.product = w.product AND fresh_users.first_d = w.day
