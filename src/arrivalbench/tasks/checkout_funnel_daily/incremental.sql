-- Incremental: event_history is keyed on the event id, so a run reads only the stored ids its
-- batch repeats, and carries each event's day:user key; user_progress keeps how far each
-- logged-in user got in the funnel on each day. A run recomputes the funnel of only the
-- (day, user) pairs its new events touch, from their stored events and the new ones, and
-- moves the step counts of their days by the difference; event counts grow by the new events.
-- Only those pairs and days are read and rewritten, all in one transaction: a retried batch
-- finds its events stored.
CREATE TABLE IF NOT EXISTS event_history (
    event_id    VARCHAR PRIMARY KEY,
    day_user    VARCHAR,
    event_name  VARCHAR,
    occurred_at TIMESTAMP
);

CREATE TABLE IF NOT EXISTS user_progress (
    day_user VARCHAR PRIMARY KEY,
    steps    INTEGER
);

CREATE TABLE IF NOT EXISTS checkout_funnel (
    day       DATE,
    step      INTEGER,
    step_name VARCHAR,
    users     BIGINT,
    events    BIGINT,
    PRIMARY KEY (day, step)
);

-- No key list a lookup joins against is ever empty (an empty one looks up a placeholder key
-- that no row has: '' or 1970-01-01, a day rewritten from its own stored rows if it had any):
-- DuckDB pushes the keys of a join's small side into the scan of the stored table, but from an
-- empty side it pushes nothing and reads the table whole.
CREATE OR REPLACE TEMP TABLE batch_ids AS
SELECT event_id FROM incoming.shop_events
UNION ALL SELECT coalesce(min(event_id), '') FROM incoming.shop_events;

CREATE OR REPLACE TEMP TABLE known AS
SELECT h.event_id FROM event_history AS h WHERE h.event_id IN (SELECT event_id FROM batch_ids);

CREATE OR REPLACE TEMP TABLE fresh AS
SELECT DISTINCT ON (event_id) event_id,
       CAST(occurred_at AS DATE) || ':' || user_id AS day_user,
       CAST(occurred_at AS DATE) AS day, event_name, occurred_at
FROM incoming.shop_events
WHERE event_id NOT IN (SELECT event_id FROM known)
ORDER BY event_id;

CREATE OR REPLACE TEMP TABLE pair_keys AS
SELECT DISTINCT day_user FROM fresh WHERE day_user IS NOT NULL
UNION ALL SELECT coalesce(min(day_user), '') FROM fresh;

-- Every event of the touched pairs, stored or new.
CREATE OR REPLACE TEMP TABLE e AS
SELECT h.day_user, h.event_name, h.occurred_at FROM event_history AS h
WHERE h.day_user IN (SELECT day_user FROM pair_keys)
UNION ALL
SELECT day_user, event_name, occurred_at FROM fresh WHERE day_user IS NOT NULL;

CREATE OR REPLACE TEMP TABLE progress AS
WITH s1 AS (
    SELECT day_user, min(occurred_at) AS t FROM e WHERE event_name = 'product_view'
    GROUP BY day_user
),
s2 AS (
    SELECT s.day_user, min(e.occurred_at) AS t FROM s1 AS s
    JOIN e ON e.day_user = s.day_user AND e.event_name = 'add_to_cart' AND e.occurred_at >= s.t
    GROUP BY s.day_user
),
s3 AS (
    SELECT s.day_user, min(e.occurred_at) AS t FROM s2 AS s
    JOIN e ON e.day_user = s.day_user AND e.event_name = 'checkout_start' AND e.occurred_at >= s.t
    GROUP BY s.day_user
),
s4 AS (
    SELECT s.day_user, min(e.occurred_at) AS t FROM s3 AS s
    JOIN e ON e.day_user = s.day_user AND e.event_name = 'purchase' AND e.occurred_at >= s.t
    GROUP BY s.day_user
)
SELECT p.day_user,
       CASE WHEN s4.day_user IS NOT NULL THEN 4 WHEN s3.day_user IS NOT NULL THEN 3
            WHEN s2.day_user IS NOT NULL THEN 2 WHEN s1.day_user IS NOT NULL THEN 1
            ELSE 0 END AS steps
FROM (SELECT DISTINCT day_user FROM fresh WHERE day_user IS NOT NULL) AS p
LEFT JOIN s1 USING (day_user) LEFT JOIN s2 USING (day_user)
LEFT JOIN s3 USING (day_user) LEFT JOIN s4 USING (day_user);

CREATE OR REPLACE TEMP TABLE old_progress AS
SELECT u.day_user, u.steps FROM user_progress AS u
WHERE u.day_user IN (SELECT day_user FROM pair_keys);

CREATE OR REPLACE TEMP TABLE steps AS
SELECT * FROM (VALUES (1, 'product_view'), (2, 'add_to_cart'), (3, 'checkout_start'),
                      (4, 'purchase')) AS s(step, step_name);

CREATE OR REPLACE TEMP TABLE step_delta AS
SELECT CAST(split_part(p.day_user, ':', 1) AS DATE) AS day, s.step,
       sum(CASE WHEN p.steps >= s.step THEN 1 ELSE 0 END
           - CASE WHEN COALESCE(o.steps, 0) >= s.step THEN 1 ELSE 0 END) AS users,
       0 AS events
FROM progress AS p LEFT JOIN old_progress AS o USING (day_user) CROSS JOIN steps AS s
GROUP BY ALL
UNION ALL
SELECT d.day, s.step, 0, count(f.event_id)
FROM (SELECT DISTINCT day FROM fresh) AS d CROSS JOIN steps AS s
LEFT JOIN fresh AS f ON f.day = d.day AND f.event_name = s.step_name
GROUP BY ALL;

CREATE OR REPLACE TEMP TABLE day_keys AS
SELECT DISTINCT day FROM fresh
UNION ALL SELECT DATE '1970-01-01' WHERE NOT EXISTS (SELECT 1 FROM fresh);

CREATE OR REPLACE TEMP TABLE now AS
SELECT day, step, sum(users) AS users, sum(events) AS events
FROM (
    SELECT c.day, c.step, c.users, c.events FROM checkout_funnel AS c
    WHERE c.day IN (SELECT day FROM day_keys)
    UNION ALL
    SELECT day, step, users, events FROM step_delta
)
GROUP BY day, step;

BEGIN TRANSACTION;

INSERT INTO event_history SELECT event_id, day_user, event_name, occurred_at FROM fresh;

DELETE FROM user_progress WHERE day_user IN (SELECT day_user FROM pair_keys);

INSERT INTO user_progress SELECT day_user, steps FROM progress;

DELETE FROM checkout_funnel WHERE day IN (SELECT day FROM day_keys);

INSERT INTO checkout_funnel
SELECT n.day, n.step, s.step_name, n.users, n.events FROM now AS n JOIN steps AS s USING (step);

COMMIT;
