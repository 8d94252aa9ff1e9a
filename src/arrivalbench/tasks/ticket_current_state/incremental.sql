-- Incremental: ticket_state keeps each ticket's highest version seen so far, removals included,
-- keyed (indexed) on the ticket. A run reads the stored state of just the tickets its batch
-- mentions, keeps the batch's highest version per ticket where it is higher, and rewrites just
-- those tickets' state and board rows (a removal deletes the board row). Replaying a batch
-- finds nothing higher and changes nothing; one transaction.
-- DuckDB reads the whole stored side of a join whose other side ends up empty, so the state
-- holds one sentinel row (ticket -1) that every lookup also asks for, and a board row is
-- deleted only when the stored state shows it is on the board.
BEGIN TRANSACTION;

-- Created with its sentinel row, once (the statement does nothing when the table exists).
CREATE TABLE IF NOT EXISTS ticket_state AS
SELECT -1::BIGINT AS ticket_id, NULL::INTEGER AS version, NULL::VARCHAR AS op,
       NULL::VARCHAR AS status, NULL::VARCHAR AS priority, NULL::VARCHAR AS queue,
       NULL::INTEGER AS assignee_id, NULL::VARCHAR AS subject, NULL::TIMESTAMP AS updated_at;
CREATE UNIQUE INDEX IF NOT EXISTS ticket_state_id ON ticket_state (ticket_id);

CREATE TABLE IF NOT EXISTS ticket_board (
    ticket_id   BIGINT PRIMARY KEY,
    status      VARCHAR,
    priority    VARCHAR,
    queue       VARCHAR,
    assignee_id INTEGER,
    subject     VARCHAR,
    updated_at  TIMESTAMP
);

CREATE OR REPLACE TEMP TABLE before AS
SELECT s.* FROM ticket_state AS s
WHERE s.ticket_id IN (SELECT ticket_id FROM incoming.ticket_changes UNION ALL SELECT -1);
DELETE FROM before WHERE ticket_id = -1;

CREATE OR REPLACE TEMP TABLE winners AS
SELECT c.ticket_id, c.version, c.op, c.status, c.priority, c.queue, c.assignee_id, c.subject,
       c.updated_at, b.ticket_id IS NOT NULL AS was_stored, b.op = 'upsert' AS was_on_board
FROM (SELECT * FROM incoming.ticket_changes
      QUALIFY row_number() OVER (PARTITION BY ticket_id ORDER BY version DESC) = 1) AS c
LEFT JOIN before AS b USING (ticket_id)
WHERE b.ticket_id IS NULL OR c.version > b.version;

CREATE OR REPLACE TEMP TABLE replaced_state AS
SELECT ticket_id FROM winners WHERE was_stored;

CREATE OR REPLACE TEMP TABLE replaced_board AS
SELECT ticket_id FROM winners WHERE was_on_board;

DELETE FROM ticket_state
WHERE ticket_id IN (SELECT ticket_id FROM replaced_state UNION ALL SELECT -2);

INSERT INTO ticket_state
SELECT ticket_id, version, op, status, priority, queue, assignee_id, subject, updated_at
FROM winners;

DELETE FROM ticket_board
WHERE ticket_id IN (SELECT ticket_id FROM replaced_board UNION ALL SELECT -2);

INSERT INTO ticket_board
SELECT ticket_id, status, priority, queue, assignee_id, subject, updated_at
FROM winners WHERE op = 'upsert';

DROP TABLE replaced_board;
DROP TABLE replaced_state;
DROP TABLE winners;
DROP TABLE before;

COMMIT;
