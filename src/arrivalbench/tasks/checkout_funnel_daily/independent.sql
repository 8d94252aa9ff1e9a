WITH ev AS (
  SELECT event_id, user_id, event_name, occurred_at, CAST(occurred_at AS DATE) AS day
  FROM shop_events
),
days AS (
  SELECT DISTINCT day FROM ev WHERE day IS NOT NULL
),
steps AS (
  SELECT * FROM (VALUES (1, 'product_view'), (2, 'add_to_cart'), (3, 'checkout_start'), (4, 'purchase')) AS s(step, step_name)
),
s1 AS (
  SELECT day, user_id, MIN(occurred_at) AS t
  FROM ev WHERE user_id IS NOT NULL AND event_name = 'product_view'
  GROUP BY day, user_id
),
s2 AS (
  SELECT s1.day, s1.user_id, MIN(e.occurred_at) AS t
  FROM s1 JOIN ev e
    ON e.day = s1.day AND e.user_id = s1.user_id AND e.event_name = 'add_to_cart' AND e.occurred_at >= s1.t
  GROUP BY s1.day, s1.user_id
),
s3 AS (
  SELECT s2.day, s2.user_id, MIN(e.occurred_at) AS t
  FROM s2 JOIN ev e
    ON e.day = s2.day AND e.user_id = s2.user_id AND e.event_name = 'checkout_start' AND e.occurred_at >= s2.t
  GROUP BY s2.day, s2.user_id
),
s4 AS (
  SELECT s3.day, s3.user_id, MIN(e.occurred_at) AS t
  FROM s3 JOIN ev e
    ON e.day = s3.day AND e.user_id = s3.user_id AND e.event_name = 'purchase' AND e.occurred_at >= s3.t
  GROUP BY s3.day, s3.user_id
),
reached AS (
  SELECT day, 1 AS step, user_id FROM s1
  UNION ALL SELECT day, 2, user_id FROM s2
  UNION ALL SELECT day, 3, user_id FROM s3
  UNION ALL SELECT day, 4, user_id FROM s4
),
user_counts AS (
  SELECT day, step, COUNT(DISTINCT user_id) AS users FROM reached GROUP BY day, step
),
event_counts AS (
  SELECT e.day, s.step, COUNT(*) AS events
  FROM ev e JOIN steps s ON e.event_name = s.step_name
  GROUP BY e.day, s.step
)
SELECT
  CAST(d.day AS DATE) AS day,
  CAST(s.step AS INTEGER) AS step,
  CAST(s.step_name AS VARCHAR) AS step_name,
  CAST(COALESCE(u.users, 0) AS BIGINT) AS users,
  CAST(COALESCE(c.events, 0) AS BIGINT) AS events
FROM days d
CROSS JOIN steps s
LEFT JOIN user_counts u ON u.day = d.day AND u.step = s.step
LEFT JOIN event_counts c ON c.day = d.day AND c.step = s.step
ORDER BY day, step
