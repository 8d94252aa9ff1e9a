-- Keep every event once, keyed on its id, and each user's first day on a product as it is
-- first seen; rebuild the counts from the history on every run, new users from those first days.
-- One transaction per run.
BEGIN TRANSACTION;

CREATE TABLE IF NOT EXISTS event_history (
    event_id    VARCHAR,
    user_id     BIGINT,
    product     VARCHAR,
    event_name  VARCHAR,
    occurred_at TIMESTAMP
);

CREATE TABLE IF NOT EXISTS first_seen (
    product   VARCHAR,
    user_id   BIGINT,
    first_day DATE,
    PRIMARY KEY (product, user_id)
);

CREATE OR REPLACE TEMP TABLE fresh AS
SELECT event_id, user_id, product, event_name, occurred_at
FROM incoming.product_events
WHERE event_id NOT IN (SELECT event_id FROM event_history)
QUALIFY row_number() OVER (PARTITION BY event_id ORDER BY occurred_at) = 1;

INSERT INTO event_history SELECT * FROM fresh;

INSERT INTO first_seen
SELECT product, user_id, min(CAST(occurred_at AS DATE)) FROM fresh GROUP BY product, user_id
ON CONFLICT DO NOTHING;

CREATE OR REPLACE TABLE product_active_users AS
WITH user_days AS (
    SELECT product, user_id, CAST(occurred_at AS DATE) AS day, count(*) AS events
    FROM event_history
    GROUP BY product, user_id, CAST(occurred_at AS DATE)
),
first_days AS (
    SELECT product, user_id, first_day AS day FROM first_seen
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
GROUP BY c.product, c.day;

COMMIT;
