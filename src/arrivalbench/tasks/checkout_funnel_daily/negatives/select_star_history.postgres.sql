-- Keep a raw copy of the tracking feed with its own columns, each event id once, and
-- recompute the funnel from it.
CREATE TABLE IF NOT EXISTS event_history AS
SELECT * FROM incoming.shop_events LIMIT 0;

INSERT INTO event_history
SELECT DISTINCT * FROM incoming.shop_events
WHERE event_id NOT IN (SELECT event_id FROM event_history);

DROP TABLE IF EXISTS checkout_funnel;

CREATE TABLE checkout_funnel AS
WITH e AS (
    SELECT event_id, user_id, event_name, occurred_at, CAST(occurred_at AS DATE) AS day
    FROM event_history
),
days AS (SELECT DISTINCT day FROM e),
s1 AS (
    SELECT day, user_id, min(occurred_at) AS t FROM e
    WHERE event_name = 'product_view' AND user_id IS NOT NULL GROUP BY day, user_id
),
s2 AS (
    SELECT s.day, s.user_id, min(e.occurred_at) AS t FROM s1 AS s
    JOIN e ON e.day = s.day AND e.user_id = s.user_id
          AND e.event_name = 'add_to_cart' AND e.occurred_at >= s.t
    GROUP BY s.day, s.user_id
),
s3 AS (
    SELECT s.day, s.user_id, min(e.occurred_at) AS t FROM s2 AS s
    JOIN e ON e.day = s.day AND e.user_id = s.user_id
          AND e.event_name = 'checkout_start' AND e.occurred_at >= s.t
    GROUP BY s.day, s.user_id
),
s4 AS (
    SELECT s.day, s.user_id, min(e.occurred_at) AS t FROM s3 AS s
    JOIN e ON e.day = s.day AND e.user_id = s.user_id
          AND e.event_name = 'purchase' AND e.occurred_at >= s.t
    GROUP BY s.day, s.user_id
),
reached AS (
    SELECT day, 1 AS step, count(*) AS users FROM s1 GROUP BY day
    UNION ALL SELECT day, 2, count(*) FROM s2 GROUP BY day
    UNION ALL SELECT day, 3, count(*) FROM s3 GROUP BY day
    UNION ALL SELECT day, 4, count(*) FROM s4 GROUP BY day
),
steps AS (
    SELECT * FROM (VALUES (1, 'product_view'), (2, 'add_to_cart'), (3, 'checkout_start'),
                          (4, 'purchase')) AS s(step, step_name)
),
counted AS (SELECT day, event_name, count(*) AS events FROM e GROUP BY day, event_name)
SELECT
    d.day,
    s.step,
    s.step_name,
    COALESCE(r.users, 0)  AS users,
    COALESCE(c.events, 0) AS events
FROM days AS d
CROSS JOIN steps AS s
LEFT JOIN reached AS r ON r.day = d.day AND r.step = s.step
LEFT JOIN counted AS c ON c.day = d.day AND c.event_name = s.step_name;
