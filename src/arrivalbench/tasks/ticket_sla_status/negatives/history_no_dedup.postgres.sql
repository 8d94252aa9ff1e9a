-- Every delivered event is kept in event_history. The tickets the batch mentions are deleted
-- from the table and inserted again, recomputed from their full history.
CREATE TABLE IF NOT EXISTS event_history (
    event_id   BIGINT,
    ticket_id  BIGINT,
    event_type VARCHAR,
    queue      VARCHAR,
    agent_id   INTEGER,
    event_at   TIMESTAMP
);

CREATE TABLE IF NOT EXISTS ticket_sla (
    ticket_id         BIGINT,
    queue             VARCHAR,
    opened_at         TIMESTAMP,
    first_response_at TIMESTAMP,
    response_minutes  BIGINT,
    agent_replies     BIGINT,
    resolved_at       TIMESTAMP
);

INSERT INTO event_history
SELECT event_id, ticket_id, event_type, queue, agent_id, event_at
FROM incoming.ticket_events;

DELETE FROM ticket_sla
WHERE ticket_id IN (SELECT ticket_id FROM incoming.ticket_events);

-- array_agg(...)[1] is DuckDB's arg_max; whole seconds apart, EXTRACT(EPOCH ...) is its
-- date_diff('second', ...).
INSERT INTO ticket_sla
WITH per_ticket AS (
    SELECT
        ticket_id,
        max(queue) FILTER (WHERE event_type = 'opened')                          AS queue,
        min(event_at) FILTER (WHERE event_type = 'opened')                       AS opened_at,
        min(event_at) FILTER (WHERE event_type = 'agent_reply')                  AS first_response_at,
        count(*) FILTER (WHERE event_type = 'agent_reply')                       AS agent_replies,
        (array_agg(event_type ORDER BY event_at DESC)
            FILTER (WHERE event_type IN ('resolved', 'reopened') AND event_at IS NOT NULL))[1]
                                                                                 AS last_resolution,
        max(event_at) FILTER (WHERE event_type = 'resolved')                     AS last_resolved_at
    FROM event_history
    WHERE ticket_id IN (SELECT ticket_id FROM incoming.ticket_events)
    GROUP BY ticket_id
)
SELECT
    ticket_id,
    queue,
    opened_at,
    first_response_at,
    CAST(EXTRACT(EPOCH FROM first_response_at - opened_at) AS BIGINT) / 60,
    agent_replies,
    CASE WHEN last_resolution = 'resolved' THEN last_resolved_at END
FROM per_ticket
WHERE opened_at IS NOT NULL;
