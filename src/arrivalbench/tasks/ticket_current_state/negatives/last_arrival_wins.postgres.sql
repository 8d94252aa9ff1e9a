-- Apply each change once, in the order changes reach us: a change id applied before is
-- skipped; within a batch the latest change of a ticket wins; removals delete the row.
CREATE TABLE IF NOT EXISTS applied_changes (change_id BIGINT PRIMARY KEY);

CREATE TABLE IF NOT EXISTS ticket_board (
    ticket_id   BIGINT PRIMARY KEY,
    status      VARCHAR,
    priority    VARCHAR,
    queue       VARCHAR,
    assignee_id INTEGER,
    subject     VARCHAR,
    updated_at  TIMESTAMP
);

CREATE TEMP TABLE latest AS
SELECT ticket_id, op, status, priority, queue, assignee_id, subject, updated_at
FROM (
    SELECT *, row_number() OVER (PARTITION BY ticket_id
                                 ORDER BY updated_at DESC NULLS LAST,
                                          version DESC NULLS LAST) AS rn
    FROM incoming.ticket_changes
    WHERE change_id NOT IN (SELECT change_id FROM applied_changes)
) AS c
WHERE rn = 1;

DELETE FROM ticket_board
WHERE ticket_id IN (SELECT ticket_id FROM latest WHERE op = 'delete');

INSERT INTO ticket_board
SELECT ticket_id, status, priority, queue, assignee_id, subject, updated_at
FROM latest
WHERE op = 'upsert'
ON CONFLICT (ticket_id) DO UPDATE SET
    status = EXCLUDED.status, priority = EXCLUDED.priority, queue = EXCLUDED.queue,
    assignee_id = EXCLUDED.assignee_id, subject = EXCLUDED.subject,
    updated_at = EXCLUDED.updated_at;

INSERT INTO applied_changes
SELECT DISTINCT change_id FROM incoming.ticket_changes
ON CONFLICT DO NOTHING;
