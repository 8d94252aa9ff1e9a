-- One transaction per batch. Events are kept once per id; a user we have never heard of is
-- registered in known_users with the day of their first event in the batch, and that day
-- counts them as new.
BEGIN TRANSACTION;

CREATE TABLE IF NOT EXISTS event_history (
    event_id    TEXT PRIMARY KEY,
    user_id     INTEGER,
    platform    TEXT,
    event_name  TEXT,
    occurred_at TIMESTAMP
);

CREATE TABLE IF NOT EXISTS known_users (user_id INTEGER PRIMARY KEY, first_day DATE);

INSERT INTO event_history
SELECT DISTINCT event_id, user_id, platform, event_name, occurred_at FROM incoming.app_events
ON CONFLICT DO NOTHING;

INSERT INTO known_users
SELECT user_id, min(CAST(occurred_at AS DATE))
FROM incoming.app_events
WHERE user_id IS NOT NULL AND user_id NOT IN (SELECT user_id FROM known_users)
GROUP BY user_id;

DROP TABLE IF EXISTS daily_active_users;

CREATE TABLE daily_active_users AS
WITH daily AS (
    SELECT CAST(occurred_at AS DATE) AS day, count(DISTINCT user_id) AS active_users,
           count(*) AS events
    FROM event_history
    GROUP BY CAST(occurred_at AS DATE)
),
fresh AS (
    SELECT first_day AS day, count(*) AS new_users FROM known_users GROUP BY first_day
)
SELECT
    d.day,
    d.active_users,
    COALESCE(f.new_users, 0)                  AS new_users,
    d.active_users - COALESCE(f.new_users, 0) AS returning_users,
    d.events
FROM daily AS d
LEFT JOIN fresh AS f USING (day);

COMMIT;
