-- ticket_state keeps each ticket's highest version seen so far, removals included, so that an
-- older change can never bring a removed ticket back. A change replaces the stored one only if
-- its version is higher (MERGE with a version guard). The board is the state minus removals.
CREATE TABLE IF NOT EXISTS ticket_state (
    ticket_id   BIGINT PRIMARY KEY,
    version     INTEGER NOT NULL,
    op          VARCHAR NOT NULL,
    status      VARCHAR,
    priority    VARCHAR,
    queue       VARCHAR,
    assignee_id INTEGER,
    subject     VARCHAR,
    updated_at  TIMESTAMP
);

MERGE INTO ticket_state AS t
USING (
    SELECT ticket_id, version, op, status, priority, queue, assignee_id, subject, updated_at
    FROM (
        SELECT *, row_number() OVER (PARTITION BY ticket_id ORDER BY version DESC NULLS LAST) AS rn
        FROM incoming.ticket_changes
    ) AS latest
    WHERE rn = 1
) AS c
ON t.ticket_id = c.ticket_id
WHEN MATCHED AND c.version > t.version THEN UPDATE SET
    version = c.version, op = c.op, status = c.status, priority = c.priority,
    queue = c.queue, assignee_id = c.assignee_id, subject = c.subject,
    updated_at = c.updated_at
WHEN NOT MATCHED THEN INSERT VALUES
    (c.ticket_id, c.version, c.op, c.status, c.priority, c.queue, c.assignee_id, c.subject,
     c.updated_at);

DROP TABLE IF EXISTS ticket_board;

CREATE TABLE ticket_board AS
SELECT ticket_id, status, priority, queue, assignee_id, subject, updated_at
FROM ticket_state
WHERE op = 'upsert';
