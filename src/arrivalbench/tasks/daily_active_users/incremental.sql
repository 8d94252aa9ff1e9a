-- Incremental: three keyed stores, each read only where the batch touches it: the ids of the
-- events counted, the (user, day) pairs seen, and each user's first day. The batch's new events
-- add to their days' event counts, its new pairs to their days' active users, and a user whose
-- first day is new or earlier than the stored one moves one new user between days. Only the
-- days those changes touch are read and rewritten. Everything commits together: a retried
-- batch finds its events counted.
CREATE TABLE IF NOT EXISTS counted_events (event_id VARCHAR PRIMARY KEY);

CREATE TABLE IF NOT EXISTS user_days (
    user_id INTEGER,
    day     DATE,
    PRIMARY KEY (user_id, day)
);

CREATE TABLE IF NOT EXISTS user_first_day (
    user_id   INTEGER PRIMARY KEY,
    first_day DATE
);

CREATE TABLE IF NOT EXISTS daily_active_users (
    day             DATE PRIMARY KEY,
    active_users    BIGINT,
    new_users       BIGINT,
    returning_users BIGINT,
    events          BIGINT
);

-- No key list a lookup joins against is ever empty (an empty one holds a placeholder key):
-- DuckDB pushes the keys of a join's small side into the scan of the stored table, but from an
-- empty side it pushes nothing and reads the table whole. Placeholders are only looked up;
-- the one day that may be one is rewritten from its own stored row, so it never changes.
CREATE OR REPLACE TEMP TABLE batch_ids AS
SELECT event_id FROM incoming.app_events
UNION ALL SELECT coalesce(min(event_id), '') FROM incoming.app_events;

CREATE OR REPLACE TEMP TABLE known AS
SELECT c.event_id FROM counted_events AS c WHERE c.event_id IN (SELECT event_id FROM batch_ids);

CREATE OR REPLACE TEMP TABLE fresh AS
SELECT DISTINCT ON (event_id) event_id, user_id, CAST(occurred_at AS DATE) AS day
FROM incoming.app_events
WHERE event_id NOT IN (SELECT event_id FROM known)
ORDER BY event_id;

CREATE OR REPLACE TEMP TABLE pairs AS
SELECT DISTINCT user_id, day FROM fresh WHERE user_id IS NOT NULL;

CREATE OR REPLACE TEMP TABLE pair_keys AS
SELECT user_id, day FROM pairs
UNION ALL SELECT 0, DATE '1970-01-01' WHERE NOT EXISTS (SELECT 1 FROM pairs);

CREATE OR REPLACE TEMP TABLE new_pairs AS
SELECT p.user_id, p.day FROM pairs AS p
WHERE NOT EXISTS (
    SELECT 1 FROM (SELECT u.user_id, u.day FROM user_days AS u
                   JOIN pair_keys AS k ON u.user_id = k.user_id AND u.day = k.day) AS s
    WHERE s.user_id = p.user_id AND s.day = p.day);

CREATE OR REPLACE TEMP TABLE batch_users AS
SELECT user_id, min(day) AS first_day FROM pairs GROUP BY user_id;

CREATE OR REPLACE TEMP TABLE user_keys AS
SELECT user_id FROM batch_users
UNION ALL SELECT coalesce(min(user_id), 0) FROM batch_users;

CREATE OR REPLACE TEMP TABLE stored_first AS
SELECT f.user_id, f.first_day FROM user_first_day AS f
WHERE f.user_id IN (SELECT user_id FROM user_keys);

CREATE OR REPLACE TEMP TABLE first_moves AS
SELECT b.user_id, s.first_day AS old_day, b.first_day AS new_day
FROM batch_users AS b LEFT JOIN stored_first AS s USING (user_id)
WHERE s.first_day IS NULL OR b.first_day < s.first_day;

CREATE OR REPLACE TEMP TABLE day_delta AS
SELECT day, sum(active) AS active_users, sum(new) AS new_users, sum(events) AS events
FROM (
    SELECT day, 0 AS active, 0 AS new, count(*) AS events FROM fresh GROUP BY day
    UNION ALL SELECT day, 1, 0, 0 FROM new_pairs
    UNION ALL SELECT new_day, 0, 1, 0 FROM first_moves
    UNION ALL SELECT old_day, 0, -1, 0 FROM first_moves WHERE old_day IS NOT NULL
)
GROUP BY day;

CREATE OR REPLACE TEMP TABLE day_keys AS
SELECT day FROM day_delta UNION ALL SELECT coalesce(min(day), DATE '1970-01-01') FROM day_delta;

CREATE OR REPLACE TEMP TABLE now AS
SELECT day, sum(active_users) AS active_users, sum(new_users) AS new_users, sum(events) AS events
FROM (
    SELECT d.day, d.active_users, d.new_users, d.events FROM daily_active_users AS d
    WHERE d.day IN (SELECT day FROM day_keys)
    UNION ALL
    SELECT day, active_users, new_users, events FROM day_delta
)
GROUP BY day;

BEGIN TRANSACTION;

INSERT INTO counted_events SELECT event_id FROM fresh;

INSERT INTO user_days SELECT user_id, day FROM new_pairs;

DELETE FROM user_first_day
WHERE user_id IN (SELECT user_id FROM user_keys)
  AND user_id IN (SELECT user_id FROM first_moves WHERE old_day IS NOT NULL);

INSERT INTO user_first_day SELECT user_id, new_day FROM first_moves;

DELETE FROM daily_active_users WHERE day IN (SELECT day FROM day_keys);

INSERT INTO daily_active_users
SELECT day, active_users, new_users, active_users - new_users, events FROM now;

COMMIT;
