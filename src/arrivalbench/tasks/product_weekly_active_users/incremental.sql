-- Incremental: every count is kept in the table and moved by deltas. Event ids counted so far
-- are kept keyed on the id; user_products keeps, per product and user, the days the user was
-- active on the product. A run looks up only the ids and the (product, user) pairs its batch
-- carries. A day new to a pair adds one active user that day, one new user on the pair's
-- earliest day (moved from its former earliest day when the new day comes before it), and one
-- weekly user on each of the seven days whose week it joins where the pair had no day yet.
-- One transaction, so a retried batch adds nothing twice.
-- No key list a lookup joins against is ever empty (it carries a placeholder key): from an
-- empty side DuckDB pushes no filter into the stored table's scan and reads it whole.
BEGIN TRANSACTION;

CREATE TABLE IF NOT EXISTS event_ids (event_id VARCHAR PRIMARY KEY);

CREATE TABLE IF NOT EXISTS user_products (pu_key VARCHAR PRIMARY KEY, days DATE[]);

CREATE TABLE IF NOT EXISTS product_active_users (
    product             VARCHAR,
    day                 DATE,
    active_users        BIGINT,
    weekly_active_users BIGINT,
    new_users           BIGINT,
    events              BIGINT,
    PRIMARY KEY (product, day)
);

CREATE OR REPLACE TEMP TABLE known AS
SELECT k.event_id FROM event_ids AS k
WHERE k.event_id IN (SELECT event_id FROM incoming.product_events UNION ALL SELECT '');

CREATE OR REPLACE TEMP TABLE fresh AS
SELECT event_id, user_id, product, CAST(occurred_at AS DATE) AS day
FROM incoming.product_events
WHERE event_id NOT IN (SELECT event_id FROM known)
QUALIFY row_number() OVER (PARTITION BY event_id ORDER BY occurred_at) = 1;

INSERT INTO event_ids SELECT event_id FROM fresh;

CREATE OR REPLACE TEMP TABLE batch_days AS
SELECT product || '|' || user_id AS pu_key, product, list(DISTINCT day) AS days
FROM fresh
GROUP BY product, user_id;

CREATE OR REPLACE TEMP TABLE stored AS
SELECT s.* FROM user_products AS s
WHERE s.pu_key IN (SELECT pu_key FROM batch_days UNION ALL SELECT '');

-- Per pair: the days it had, and the days it has now.
CREATE OR REPLACE TEMP TABLE changed AS
SELECT b.pu_key, b.product,
       coalesce(s.days, CAST([] AS DATE[])) AS old_days,
       list_sort(list_distinct(list_concat(coalesce(s.days, CAST([] AS DATE[])), b.days)))
           AS new_days
FROM batch_days AS b LEFT JOIN stored AS s USING (pu_key);

CREATE OR REPLACE TEMP TABLE added AS
SELECT pu_key, product, old_days, new_days, unnest(list_filter(new_days,
           lambda d: NOT list_contains(old_days, d))) AS day
FROM changed;

CREATE OR REPLACE TEMP TABLE deltas AS
WITH windows AS (
    SELECT DISTINCT a.pu_key, a.product, a.old_days, a.new_days,
           a.day + CAST(k.offset_days AS INTEGER) AS day
    FROM added AS a CROSS JOIN range(7) AS k (offset_days)
),
parts AS (
    SELECT product, day, 1 AS active_users, 0 AS weekly_active_users, 0 AS new_users,
           0 AS events
    FROM added
    UNION ALL
    SELECT product, day, 0, 1, 0, 0 FROM windows
    WHERE NOT list_bool_or(list_transform(old_days,
                                          lambda d: d BETWEEN windows.day - 6 AND windows.day))
       OR len(old_days) = 0
    UNION ALL
    SELECT product, list_min(new_days), 0, 0, 1, 0 FROM changed
    UNION ALL
    SELECT product, list_min(old_days), 0, 0, -1, 0 FROM changed WHERE len(old_days) > 0
    UNION ALL
    SELECT product, day, 0, 0, 0, 1 FROM fresh
)
SELECT product, day, sum(active_users) AS active_users,
       sum(weekly_active_users) AS weekly_active_users, sum(new_users) AS new_users,
       sum(events) AS events
FROM parts
GROUP BY product, day;

INSERT INTO product_active_users
SELECT product, day, active_users, weekly_active_users, new_users, events FROM deltas
ON CONFLICT (product, day) DO UPDATE SET
    active_users = active_users + EXCLUDED.active_users,
    weekly_active_users = weekly_active_users + EXCLUDED.weekly_active_users,
    new_users = new_users + EXCLUDED.new_users,
    events = events + EXCLUDED.events;

INSERT INTO user_products SELECT pu_key, new_days FROM changed
ON CONFLICT (pu_key) DO UPDATE SET days = EXCLUDED.days;

COMMIT;
