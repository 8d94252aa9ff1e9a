-- Keep the tickets opened at or after the newest ticket kept so far (each id once), and
-- recompute the daily counts from them.
CREATE TABLE IF NOT EXISTS ticket_history (
    ticket_id BIGINT PRIMARY KEY,
    queue     VARCHAR,
    channel   VARCHAR,
    priority  VARCHAR,
    opened_at TIMESTAMP
);

INSERT INTO ticket_history
SELECT DISTINCT ticket_id, queue, channel, priority, opened_at
FROM incoming.tickets_opened
WHERE opened_at >= (SELECT COALESCE(max(opened_at), TIMESTAMP '1970-01-01') FROM ticket_history)
ON CONFLICT DO NOTHING;

DROP TABLE IF EXISTS queue_daily_tickets;

CREATE TABLE queue_daily_tickets AS
SELECT
    queue,
    CAST(opened_at AS DATE)                        AS day,
    count(*)                                       AS tickets,
    count(*) FILTER (WHERE priority = 'urgent')    AS urgent_tickets
FROM ticket_history
GROUP BY queue, CAST(opened_at AS DATE);
