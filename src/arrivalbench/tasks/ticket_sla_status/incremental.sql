-- Incremental: the event history is keyed on the event id and indexed on the ticket. A run
-- looks up only the stored ids its batch carries, stores the events not seen before, reads the
-- events of just the tickets those belong to (index scans) and replaces just those tickets'
-- rows; one transaction, so a retried batch changes nothing twice.
-- DuckDB reads the whole stored side of a join whose other side ends up empty, so the history
-- holds one sentinel row (event_id -1, no ticket) that every id lookup also asks for, and a
-- ticket's row is deleted only when its earlier events show it is stored (it was opened).
BEGIN TRANSACTION;

-- Created with its sentinel row, once (the statement does nothing when the table exists).
CREATE TABLE IF NOT EXISTS event_history AS
SELECT -1::BIGINT AS event_id, NULL::BIGINT AS ticket_id, NULL::VARCHAR AS event_type,
       NULL::VARCHAR AS queue, NULL::INTEGER AS agent_id, NULL::TIMESTAMP AS event_at;
CREATE UNIQUE INDEX IF NOT EXISTS event_history_id ON event_history (event_id);
CREATE INDEX IF NOT EXISTS event_history_ticket ON event_history (ticket_id);

CREATE TABLE IF NOT EXISTS ticket_sla (
    ticket_id         BIGINT PRIMARY KEY,
    queue             VARCHAR,
    opened_at         TIMESTAMP,
    first_response_at TIMESTAMP,
    response_minutes  BIGINT,
    agent_replies     BIGINT,
    resolved_at       TIMESTAMP
);

CREATE OR REPLACE TEMP TABLE known AS
SELECT h.event_id FROM event_history AS h
WHERE h.event_id IN (SELECT event_id FROM incoming.ticket_events UNION ALL SELECT -1);

CREATE OR REPLACE TEMP TABLE fresh AS
SELECT DISTINCT ON (event_id) event_id, ticket_id, event_type, queue, agent_id, event_at
FROM incoming.ticket_events
WHERE event_id NOT IN (SELECT event_id FROM known)
ORDER BY event_id;

INSERT INTO event_history SELECT * FROM fresh;

CREATE OR REPLACE TEMP TABLE touched AS
SELECT h.* FROM event_history AS h
WHERE h.ticket_id IN (SELECT ticket_id FROM fresh UNION ALL SELECT -1);

CREATE OR REPLACE TEMP TABLE stored AS
SELECT DISTINCT ticket_id FROM touched
WHERE event_type = 'opened' AND event_id NOT IN (SELECT event_id FROM fresh);

DELETE FROM ticket_sla
WHERE ticket_id IN (SELECT ticket_id FROM stored UNION ALL SELECT -1);

INSERT INTO ticket_sla
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
    FROM touched
    GROUP BY ticket_id
)
SELECT
    ticket_id,
    queue,
    opened_at,
    first_response_at,
    date_diff('second', opened_at, first_response_at) // 60,
    agent_replies,
    CASE WHEN last_resolution = 'resolved' THEN last_resolved_at END
FROM per_ticket
WHERE opened_at IS NOT NULL;

DROP TABLE stored;
DROP TABLE touched;
DROP TABLE fresh;
DROP TABLE known;

COMMIT;
