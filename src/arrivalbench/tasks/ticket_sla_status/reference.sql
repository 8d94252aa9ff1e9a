WITH per_ticket AS (
    SELECT
        ticket_id,
        max(queue) FILTER (WHERE event_type = 'opened')                          AS queue,
        min(event_at) FILTER (WHERE event_type = 'opened')                       AS opened_at,
        min(event_at) FILTER (WHERE event_type = 'agent_reply')                  AS first_response_at,
        count(*) FILTER (WHERE event_type = 'agent_reply')                       AS agent_replies,
        arg_max(event_type, event_at) FILTER (WHERE event_type IN ('resolved', 'reopened'))
                                                                                 AS last_resolution,
        max(event_at) FILTER (WHERE event_type = 'resolved')                     AS last_resolved_at
    FROM ticket_events
    GROUP BY ticket_id
)
SELECT
    ticket_id,
    queue,
    opened_at,
    first_response_at,
    date_diff('second', opened_at, first_response_at) // 60                      AS response_minutes,
    agent_replies,
    CASE WHEN last_resolution = 'resolved' THEN last_resolved_at END             AS resolved_at
FROM per_ticket
WHERE opened_at IS NOT NULL
