-- Keep a raw copy of the change feed with its own columns, each change id once; rebuild the
-- board from it.
CREATE TABLE IF NOT EXISTS ticket_changes_raw AS
SELECT * FROM incoming.ticket_changes LIMIT 0;

INSERT INTO ticket_changes_raw
SELECT DISTINCT * FROM incoming.ticket_changes
WHERE change_id NOT IN (SELECT change_id FROM ticket_changes_raw);

DROP TABLE IF EXISTS ticket_board;

CREATE TABLE ticket_board AS
SELECT ticket_id, status, priority, queue, assignee_id, subject, updated_at
FROM (
    SELECT *, row_number() OVER (PARTITION BY ticket_id ORDER BY version DESC NULLS LAST) AS rn
    FROM ticket_changes_raw
) AS c
WHERE rn = 1
    AND op = 'upsert';
