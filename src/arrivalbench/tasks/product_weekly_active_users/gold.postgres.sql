-- Keep every event once, keyed on its id; rebuild the table from the whole history on every
-- run.
CREATE TABLE IF NOT EXISTS event_history (
    event_id    VARCHAR,
    user_id     BIGINT,
    product     VARCHAR,
    event_name  VARCHAR,
    occurred_at TIMESTAMP
);

INSERT INTO event_history
SELECT DISTINCT ON (event_id) event_id, user_id, product, event_name, occurred_at
FROM incoming.product_events
WHERE event_id NOT IN (SELECT event_id FROM event_history)
ORDER BY event_id;

DROP TABLE IF EXISTS product_active_users;

CREATE TABLE product_active_users AS
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
    FROM user_days AS u CROSS JOIN generate_series(0, 6) AS k (offset_days)
)
SELECT c.product, c.day,
       count(DISTINCT c.user_id) FILTER (WHERE c.same_day) AS active_users,
       count(DISTINCT c.user_id) AS weekly_active_users,
       (SELECT count(*) FROM first_days AS f WHERE f.product = c.product AND f.day = c.day)
           AS new_users,
       coalesce(sum(c.events) FILTER (WHERE c.same_day), 0) AS events
FROM covered AS c
GROUP BY c.product, c.day;
