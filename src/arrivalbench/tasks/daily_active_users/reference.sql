WITH e AS (
    SELECT *, CAST(occurred_at AS DATE) AS day FROM app_events
),
first_day AS (
    SELECT user_id, min(day) AS day FROM e WHERE user_id IS NOT NULL GROUP BY user_id
),
daily AS (
    SELECT day, count(DISTINCT user_id) AS active_users, count(*) AS events
    FROM e GROUP BY day
),
fresh AS (
    SELECT day, count(*) AS new_users FROM first_day GROUP BY day
)
SELECT
    d.day,
    d.active_users,
    COALESCE(f.new_users, 0)                  AS new_users,
    d.active_users - COALESCE(f.new_users, 0) AS returning_users,
    d.events
FROM daily AS d
LEFT JOIN fresh AS f USING (day)
