WITH ev AS (
    SELECT event_id, user_id, CAST(occurred_at AS DATE) AS day
    FROM app_events
),
first_day AS (
    SELECT user_id, min(day) AS first_day
    FROM ev
    WHERE user_id IS NOT NULL
    GROUP BY user_id
),
user_days AS (
    SELECT DISTINCT e.day, e.user_id, (f.first_day = e.day) AS is_new
    FROM ev e JOIN first_day f USING (user_id)
),
users_per_day AS (
    SELECT day, count(*) AS active_users, count(*) FILTER (WHERE is_new) AS new_users
    FROM user_days
    GROUP BY day
),
events_per_day AS (
    SELECT day, count(*) AS events
    FROM ev
    GROUP BY day
)
SELECT
    CAST(d.day AS DATE) AS day,
    CAST(coalesce(u.active_users, 0) AS BIGINT) AS active_users,
    CAST(coalesce(u.new_users, 0) AS BIGINT) AS new_users,
    CAST(coalesce(u.active_users, 0) - coalesce(u.new_users, 0) AS BIGINT) AS returning_users,
    CAST(d.events AS BIGINT) AS events
FROM events_per_day d
LEFT JOIN users_per_day u USING (day)
ORDER BY d.day
