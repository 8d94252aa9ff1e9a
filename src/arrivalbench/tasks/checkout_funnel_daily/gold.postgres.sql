-- Keep every event once; the days the batch touches are deleted from the funnel and inserted
-- again, recomputed from the history of those days.
CREATE TABLE IF NOT EXISTS event_history (
    event_id    TEXT PRIMARY KEY,
    user_id     INTEGER,
    event_name  TEXT,
    occurred_at TIMESTAMP
);

CREATE TABLE IF NOT EXISTS checkout_funnel (
    day       DATE,
    step      INTEGER,
    step_name TEXT,
    users     BIGINT,
    events    BIGINT
);

INSERT INTO event_history
SELECT DISTINCT event_id, user_id, event_name, occurred_at FROM incoming.shop_events
ON CONFLICT DO NOTHING;

DELETE FROM checkout_funnel
WHERE day IN (SELECT CAST(occurred_at AS DATE) FROM incoming.shop_events);

INSERT INTO checkout_funnel
WITH e AS (
    SELECT event_id, user_id, event_name, occurred_at, CAST(occurred_at AS DATE) AS day
    FROM event_history
    WHERE CAST(occurred_at AS DATE) IN (SELECT CAST(occurred_at AS DATE) FROM incoming.shop_events)
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
