-- Keep a raw copy of the new-ticket feed with its own columns, each ticket once, and recompute
-- the daily counts from it.
CREATE TABLE IF NOT EXISTS tickets_raw AS
SELECT * FROM incoming.tickets_opened LIMIT 0;

INSERT INTO tickets_raw
SELECT DISTINCT * FROM incoming.tickets_opened
WHERE ticket_id NOT IN (SELECT ticket_id FROM tickets_raw);

DROP TABLE IF EXISTS queue_daily_tickets;

CREATE TABLE queue_daily_tickets AS
SELECT
    queue,
    CAST(opened_at AS DATE)                        AS day,
    count(*)                                       AS tickets,
    count(*) FILTER (WHERE priority = 'urgent')    AS urgent_tickets
FROM tickets_raw
GROUP BY queue, CAST(opened_at AS DATE);
