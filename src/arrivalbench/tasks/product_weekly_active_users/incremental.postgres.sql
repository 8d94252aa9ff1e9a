-- Incremental: every count is kept in the table and moved by deltas. Event ids counted so far
-- are kept keyed on the id; user_product_days keeps, per product and user, the days the user
-- was active on the product (one row a day). A run looks up only the ids and the (product,
-- user) pairs its batch carries. A day new to a pair adds one active user that day, one new
-- user on the pair's earliest day (moved from its former earliest day when the new day comes
-- before it), and one weekly user on each of the seven days whose week it joins where the pair
-- had no day yet. One transaction, so a retried batch adds nothing twice.
CREATE TABLE IF NOT EXISTS event_ids (event_id VARCHAR PRIMARY KEY);

CREATE TABLE IF NOT EXISTS user_product_days (
    product VARCHAR,
    user_id BIGINT,
    day     DATE,
    PRIMARY KEY (product, user_id, day)
);

CREATE TABLE IF NOT EXISTS product_active_users (
    product             VARCHAR,
    day                 DATE,
    active_users        BIGINT,
    weekly_active_users BIGINT,
    new_users           BIGINT,
    events              BIGINT,
    PRIMARY KEY (product, day)
);

CREATE TEMP TABLE fresh AS
SELECT DISTINCT ON (i.event_id) i.event_id, i.user_id, i.product,
       CAST(i.occurred_at AS DATE) AS day
FROM incoming.product_events AS i
WHERE NOT EXISTS (SELECT 1 FROM event_ids AS k WHERE k.event_id = i.event_id)
ORDER BY i.event_id, i.occurred_at;

CREATE TEMP TABLE batch_days AS
SELECT DISTINCT product, user_id, day FROM fresh;

-- Every stored day of the pairs the batch touches.
CREATE TEMP TABLE stored AS
SELECT s.product, s.user_id, s.day FROM user_product_days AS s
WHERE EXISTS (SELECT 1 FROM batch_days AS b
              WHERE b.product = s.product AND b.user_id = s.user_id);

CREATE TEMP TABLE added AS
SELECT b.product, b.user_id, b.day FROM batch_days AS b
WHERE NOT EXISTS (SELECT 1 FROM stored AS s
                  WHERE s.product = b.product AND s.user_id = b.user_id AND s.day = b.day);

-- Per pair with a new day: its earliest new day and its earliest stored day (none: a new user).
CREATE TEMP TABLE firsts AS
SELECT a.product, a.user_id, min(a.day) AS added_first,
       (SELECT min(s.day) FROM stored AS s
        WHERE s.product = a.product AND s.user_id = a.user_id) AS old_first
FROM added AS a
GROUP BY a.product, a.user_id;

CREATE TEMP TABLE deltas AS
WITH windows AS (
    SELECT DISTINCT a.product, a.user_id, a.day + k.offset_days AS day
    FROM added AS a CROSS JOIN generate_series(0, 6) AS k (offset_days)
),
parts AS (
    SELECT product, day, 1 AS active_users, 0 AS weekly_active_users, 0 AS new_users,
           0 AS events
    FROM added
    UNION ALL
    SELECT w.product, w.day, 0, 1, 0, 0 FROM windows AS w
    WHERE NOT EXISTS (SELECT 1 FROM stored AS s
                      WHERE s.product = w.product AND s.user_id = w.user_id
                        AND s.day BETWEEN w.day - 6 AND w.day)
    UNION ALL
    SELECT product, added_first, 0, 0, 1, 0 FROM firsts
    WHERE old_first IS NULL OR added_first < old_first
    UNION ALL
    SELECT product, old_first, 0, 0, -1, 0 FROM firsts
    WHERE old_first IS NOT NULL AND added_first < old_first
    UNION ALL
    SELECT product, day, 0, 0, 0, 1 FROM fresh
)
SELECT product, day, sum(active_users) AS active_users,
       sum(weekly_active_users) AS weekly_active_users, sum(new_users) AS new_users,
       sum(events) AS events
FROM parts
GROUP BY product, day;

BEGIN TRANSACTION;

INSERT INTO event_ids SELECT event_id FROM fresh;

INSERT INTO product_active_users AS t
SELECT product, day, active_users, weekly_active_users, new_users, events FROM deltas
ON CONFLICT (product, day) DO UPDATE SET
    active_users = t.active_users + EXCLUDED.active_users,
    weekly_active_users = t.weekly_active_users + EXCLUDED.weekly_active_users,
    new_users = t.new_users + EXCLUDED.new_users,
    events = t.events + EXCLUDED.events;

INSERT INTO user_product_days SELECT product, user_id, day FROM added;

COMMIT;
