-- Keep every event once, keyed on its id; recompute the rows of every day a new event falls on
-- and of the six days after it (the weeks it joins) from the history, and replace them. One
-- transaction per run.
BEGIN TRANSACTION;

CREATE TABLE IF NOT EXISTS event_history (
    event_id    VARCHAR,
    user_id     BIGINT,
    product     VARCHAR,
    event_name  VARCHAR,
    occurred_at TIMESTAMP
);

CREATE TABLE IF NOT EXISTS product_active_users (
    product             VARCHAR,
    day                 DATE,
    active_users        BIGINT,
    weekly_active_users BIGINT,
    new_users           BIGINT,
    events              BIGINT
);

CREATE OR REPLACE TEMP TABLE fresh AS
SELECT event_id, user_id, product, event_name, occurred_at
FROM incoming.product_events
WHERE event_id NOT IN (SELECT event_id FROM event_history)
QUALIFY row_number() OVER (PARTITION BY event_id ORDER BY occurred_at) = 1;

INSERT INTO event_history SELECT * FROM fresh;

CREATE OR REPLACE TEMP TABLE affected AS
SELECT DISTINCT product, CAST(occurred_at AS DATE) + CAST(k.offset_days AS INTEGER) AS day
FROM fresh CROSS JOIN range(7) AS k (offset_days);

CREATE OR REPLACE TEMP TABLE recomputed AS
SELECT r.* FROM (
    WITH user_days AS (
        SELECT product, user_id, CAST(occurred_at AS DATE) AS day, count(*) AS events
        FROM event_history
        GROUP BY product, user_id, CAST(occurred_at AS DATE)
    ),
    first_days AS (
        SELECT product, user_id, min(day) AS day FROM user_days GROUP BY product, user_id
    ),
    covered AS (
        SELECT u.product, u.day + CAST(k.offset_days AS INTEGER) AS day, u.user_id,
               k.offset_days = 0 AS same_day, u.events
        FROM user_days AS u CROSS JOIN range(7) AS k (offset_days)
    )
    SELECT c.product, c.day,
           count(DISTINCT c.user_id) FILTER (WHERE c.same_day) AS active_users,
           count(DISTINCT c.user_id) AS weekly_active_users,
           (SELECT count(*) FROM first_days AS f WHERE f.product = c.product AND f.day = c.day)
               AS new_users,
           coalesce(sum(c.events) FILTER (WHERE c.same_day), 0) AS events
    FROM covered AS c
    GROUP BY c.product, c.day
) AS r
JOIN affected AS a ON a.product = r.product AND a.day = r.day;

DELETE FROM product_active_users AS t
USING affected AS a
WHERE t.product = a.product AND t.day = a.day;

INSERT INTO product_active_users
SELECT product, day, active_users, weekly_active_users, new_users, events FROM recomputed;

COMMIT;
