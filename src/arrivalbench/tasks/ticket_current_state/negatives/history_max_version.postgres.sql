-- Keep every change received; the board holds, per ticket, the change with the highest
-- version, unless it is a removal.
CREATE TABLE IF NOT EXISTS ticket_change_log (
    change_id   BIGINT,
    ticket_id   BIGINT,
    version     INTEGER,
    op          VARCHAR,
    status      VARCHAR,
    priority    VARCHAR,
    queue       VARCHAR,
    assignee_id INTEGER,
    subject     VARCHAR,
    updated_at  TIMESTAMP
);

INSERT INTO ticket_change_log
SELECT change_id, ticket_id, version, op, status, priority, queue, assignee_id, subject,
       updated_at
FROM incoming.ticket_changes;

DROP TABLE IF EXISTS ticket_board;

CREATE TABLE ticket_board AS
SELECT l.ticket_id, l.status, l.priority, l.queue, l.assignee_id, l.subject, l.updated_at
FROM ticket_change_log AS l
JOIN (SELECT ticket_id, max(version) AS version FROM ticket_change_log GROUP BY ticket_id) AS m
  USING (ticket_id, version)
WHERE l.op = 'upsert';
