-- One transaction per batch: the events not applied before are folded into each ticket's
-- running state: the first agent reply is kept once set, replies are counted, and the latest
-- resolution event of the batch decides whether the ticket is resolved.
BEGIN TRANSACTION;

CREATE TABLE IF NOT EXISTS applied_events (event_id BIGINT PRIMARY KEY);

CREATE TABLE IF NOT EXISTS ticket_state (
    ticket_id         BIGINT PRIMARY KEY,
    queue             VARCHAR,
    opened_at         TIMESTAMP,
    first_response_at TIMESTAMP,
    agent_replies     BIGINT,
    last_resolution   VARCHAR,
    last_resolved_at  TIMESTAMP
);

CREATE TEMP TABLE fresh AS
SELECT DISTINCT event_id, ticket_id, event_type, queue, agent_id, event_at
FROM incoming.ticket_events
WHERE event_id NOT IN (SELECT event_id FROM applied_events);

INSERT INTO ticket_state AS s
SELECT
    ticket_id,
    max(queue) FILTER (WHERE event_type = 'opened'),
    min(event_at) FILTER (WHERE event_type = 'opened'),
    min(event_at) FILTER (WHERE event_type = 'agent_reply'),
    count(*) FILTER (WHERE event_type = 'agent_reply'),
    (array_agg(event_type ORDER BY event_at DESC)
        FILTER (WHERE event_type IN ('resolved', 'reopened') AND event_at IS NOT NULL))[1],
    max(event_at) FILTER (WHERE event_type = 'resolved')
FROM fresh
GROUP BY ticket_id
ON CONFLICT (ticket_id) DO UPDATE SET
    queue             = COALESCE(s.queue, EXCLUDED.queue),
    opened_at         = COALESCE(s.opened_at, EXCLUDED.opened_at),
    first_response_at = COALESCE(s.first_response_at, EXCLUDED.first_response_at),
    agent_replies     = s.agent_replies + EXCLUDED.agent_replies,
    last_resolution   = COALESCE(EXCLUDED.last_resolution, s.last_resolution),
    last_resolved_at  = COALESCE(EXCLUDED.last_resolved_at, s.last_resolved_at);

INSERT INTO applied_events SELECT event_id FROM fresh;

DROP TABLE IF EXISTS ticket_sla;

CREATE TABLE ticket_sla AS
SELECT
    ticket_id,
    queue,
    opened_at,
    first_response_at,
    CAST(EXTRACT(EPOCH FROM first_response_at - opened_at) AS BIGINT) / 60 AS response_minutes,
    agent_replies,
    CASE WHEN last_resolution = 'resolved' THEN last_resolved_at END AS resolved_at
FROM ticket_state
WHERE opened_at IS NOT NULL;

COMMIT;
