-- Stage the batch's events that the history does not hold yet (NOT EXISTS), once each; then
-- recompute the daily table from the history.
CREATE TABLE IF NOT EXISTS event_history (
    event_id    TEXT,
    user_id     INTEGER,
    platform    TEXT,
    event_name  TEXT,
    occurred_at TIMESTAMP
);

INSERT INTO event_history
SELECT event_id, user_id, platform, event_name, occurred_at
FROM (SELECT a.*, row_number() OVER (PARTITION BY a.event_id ORDER BY a.occurred_at) AS rn
      FROM incoming.app_events AS a
      WHERE NOT EXISTS (SELECT 1 FROM event_history AS h WHERE h.event_id = a.event_id)
     ) AS ranked
WHERE rn = 1;

DROP TABLE IF EXISTS daily_active_users;

CREATE TABLE daily_active_users AS
WITH e AS (
    SELECT *, CAST(occurred_at AS DATE) AS day FROM event_history
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
LEFT JOIN fresh AS f USING (day);
