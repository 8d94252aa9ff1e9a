-- Keep every ticket once; the (queue, day) groups the batch touches are deleted from the target
-- and inserted again from the history. A missing queue is a group of its own, so groups are
-- matched with IS NOT DISTINCT FROM.
CREATE TABLE IF NOT EXISTS ticket_history (
    ticket_id BIGINT PRIMARY KEY,
    queue     VARCHAR,
    channel   VARCHAR,
    priority  VARCHAR,
    opened_at TIMESTAMP
);

CREATE TABLE IF NOT EXISTS queue_daily_tickets (
    queue          VARCHAR,
    day            DATE,
    tickets        BIGINT,
    urgent_tickets BIGINT
);

INSERT INTO ticket_history
SELECT DISTINCT ticket_id, queue, channel, priority, opened_at
FROM incoming.tickets_opened
ON CONFLICT DO NOTHING;

CREATE TEMP TABLE touched AS
SELECT DISTINCT queue, CAST(opened_at AS DATE) AS day
FROM incoming.tickets_opened;

DELETE FROM queue_daily_tickets AS q
WHERE EXISTS (SELECT 1 FROM touched AS t
              WHERE t.queue IS NOT DISTINCT FROM q.queue AND t.day = q.day);

INSERT INTO queue_daily_tickets
SELECT
    h.queue,
    CAST(h.opened_at AS DATE),
    count(*),
    count(*) FILTER (WHERE h.priority = 'urgent')
FROM ticket_history AS h
WHERE EXISTS (SELECT 1 FROM touched AS t
              WHERE t.queue IS NOT DISTINCT FROM h.queue AND t.day = CAST(h.opened_at AS DATE))
GROUP BY h.queue, CAST(h.opened_at AS DATE);
