SELECT
    queue,
    CAST(opened_at AS DATE)                        AS day,
    count(*)                                       AS tickets,
    count(*) FILTER (WHERE priority = 'urgent')    AS urgent_tickets
FROM tickets_opened
GROUP BY queue, CAST(opened_at AS DATE)
