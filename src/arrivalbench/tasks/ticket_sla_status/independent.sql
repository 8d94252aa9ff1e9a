WITH opened AS (
  SELECT ticket_id, queue, event_at AS opened_at,
         ROW_NUMBER() OVER (PARTITION BY ticket_id ORDER BY event_at, event_id) AS rn
  FROM ticket_events
  WHERE event_type = 'opened'
),
replies AS (
  SELECT ticket_id, MIN(event_at) AS first_response_at, COUNT(*) AS agent_replies
  FROM ticket_events
  WHERE event_type = 'agent_reply'
  GROUP BY ticket_id
),
last_resolved AS (
  SELECT ticket_id, MAX(event_at) AS resolved_at
  FROM ticket_events
  WHERE event_type = 'resolved'
  GROUP BY ticket_id
),
last_reopened AS (
  SELECT ticket_id, MAX(event_at) AS reopened_at
  FROM ticket_events
  WHERE event_type = 'reopened'
  GROUP BY ticket_id
)
SELECT
  CAST(o.ticket_id AS BIGINT) AS ticket_id,
  CAST(o.queue AS VARCHAR) AS queue,
  CAST(o.opened_at AS TIMESTAMP) AS opened_at,
  CAST(r.first_response_at AS TIMESTAMP) AS first_response_at,
  CAST(FLOOR((EPOCH(r.first_response_at) - EPOCH(o.opened_at)) / 60) AS BIGINT) AS response_minutes,
  CAST(COALESCE(r.agent_replies, 0) AS BIGINT) AS agent_replies,
  CAST(CASE WHEN lr.resolved_at IS NOT NULL
             AND (ro.reopened_at IS NULL OR ro.reopened_at <= lr.resolved_at)
            THEN lr.resolved_at END AS TIMESTAMP) AS resolved_at
FROM opened o
LEFT JOIN replies r ON r.ticket_id = o.ticket_id
LEFT JOIN last_resolved lr ON lr.ticket_id = o.ticket_id
LEFT JOIN last_reopened ro ON ro.ticket_id = o.ticket_id
WHERE o.rn = 1
ORDER BY o.ticket_id
