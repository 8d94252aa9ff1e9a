-- Incremental: deltas applied by key. The ticket ids counted so far are kept in a registry
-- keyed (indexed) on the id, and group_state keeps each (queue, day)'s counts under one
-- indexed key. A run looks up only the ids its batch carries, counts the tickets not seen
-- before per group, adds them to the stored counts of just those groups and rewrites just
-- those groups' rows of the target; one transaction, so a retried batch adds nothing twice.
-- DuckDB reads the whole stored side of a join whose other side ends up empty, so the registry
-- and the state hold one sentinel row each that every lookup also asks for, and target rows are
-- deleted only for groups known to be stored.
BEGIN TRANSACTION;

-- Created with their sentinel rows, once (the statements do nothing when the tables exist).
CREATE TABLE IF NOT EXISTS ticket_ids AS SELECT -1::BIGINT AS ticket_id;
CREATE UNIQUE INDEX IF NOT EXISTS ticket_ids_id ON ticket_ids (ticket_id);

-- group_key: the queue (a missing queue apart from every named one) and the day.
CREATE TABLE IF NOT EXISTS group_state AS
SELECT ''::VARCHAR AS group_key, NULL::VARCHAR AS queue, NULL::DATE AS day,
       NULL::BIGINT AS tickets, NULL::BIGINT AS urgent_tickets;
CREATE UNIQUE INDEX IF NOT EXISTS group_state_key ON group_state (group_key);

CREATE TABLE IF NOT EXISTS queue_daily_tickets (
    queue          VARCHAR,
    day            DATE,
    tickets        BIGINT,
    urgent_tickets BIGINT
);
CREATE INDEX IF NOT EXISTS queue_daily_tickets_day ON queue_daily_tickets (day);

CREATE OR REPLACE TEMP TABLE known AS
SELECT k.ticket_id FROM ticket_ids AS k
WHERE k.ticket_id IN (SELECT ticket_id FROM incoming.tickets_opened UNION ALL SELECT -1);

CREATE OR REPLACE TEMP TABLE fresh AS
SELECT DISTINCT ON (ticket_id) ticket_id, queue, priority, opened_at
FROM incoming.tickets_opened
WHERE ticket_id NOT IN (SELECT ticket_id FROM known)
ORDER BY ticket_id;

INSERT INTO ticket_ids SELECT ticket_id FROM fresh;

CREATE OR REPLACE TEMP TABLE delta AS
SELECT
    CASE WHEN queue IS NULL THEN '-' ELSE '+' || queue END || '|' || CAST(opened_at AS DATE)
        AS group_key,
    queue,
    CAST(opened_at AS DATE) AS day,
    count(*) AS tickets,
    count(*) FILTER (WHERE priority = 'urgent') AS urgent_tickets
FROM fresh
GROUP BY ALL;

CREATE OR REPLACE TEMP TABLE stored AS
SELECT s.* FROM group_state AS s
WHERE s.group_key IN (SELECT group_key FROM delta UNION ALL SELECT '');
DELETE FROM stored WHERE group_key = '';

CREATE OR REPLACE TEMP TABLE updated AS
SELECT d.group_key, d.queue, d.day,
       d.tickets + coalesce(s.tickets, 0) AS tickets,
       d.urgent_tickets + coalesce(s.urgent_tickets, 0) AS urgent_tickets
FROM delta AS d LEFT JOIN stored AS s USING (group_key);

-- The sentinel goes with the stored rows (never an empty lookup) and comes back.
DELETE FROM group_state
WHERE group_key IN (SELECT group_key FROM stored UNION ALL SELECT '');

INSERT INTO group_state
SELECT * FROM updated UNION ALL SELECT '', NULL, NULL, NULL, NULL;

DELETE FROM queue_daily_tickets AS q
USING stored AS s
WHERE q.queue IS NOT DISTINCT FROM s.queue AND q.day = s.day
  AND q.day IN (SELECT day FROM stored UNION ALL SELECT DATE '0001-01-01');

INSERT INTO queue_daily_tickets
SELECT queue, day, tickets, urgent_tickets FROM updated;

DROP TABLE updated;
DROP TABLE stored;
DROP TABLE delta;
DROP TABLE fresh;
DROP TABLE known;

COMMIT;
