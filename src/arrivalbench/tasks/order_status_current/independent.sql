WITH latest AS (
  SELECT order_id, status, event_at,
         ROW_NUMBER() OVER (PARTITION BY order_id ORDER BY status_seq DESC NULLS LAST, event_at DESC NULLS LAST, event_id DESC) AS rn,
         COUNT(*) OVER (PARTITION BY order_id) AS events
  FROM order_events
),
placed AS (
  SELECT order_id, order_total, event_at,
         ROW_NUMBER() OVER (PARTITION BY order_id ORDER BY status_seq, event_at, event_id) AS rn
  FROM order_events
  WHERE status = 'placed'
)
SELECT
  CAST(l.order_id AS BIGINT) AS order_id,
  CAST(l.status AS VARCHAR) AS status,
  CAST(p.order_total AS DECIMAL(10,2)) AS order_total,
  CAST(p.event_at AS TIMESTAMP) AS placed_at,
  CAST(l.event_at AS TIMESTAMP) AS last_event_at,
  CAST(l.events AS BIGINT) AS events
FROM latest l
LEFT JOIN placed p ON p.order_id = l.order_id AND p.rn = 1
WHERE l.rn = 1
ORDER BY l.order_id
