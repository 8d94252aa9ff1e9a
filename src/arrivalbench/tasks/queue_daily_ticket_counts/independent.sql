SELECT
    CAST(queue AS VARCHAR) AS queue,
    CAST(opened_at AS DATE) AS day,
    CAST(count(*) AS BIGINT) AS tickets,
    CAST(count(*) FILTER (WHERE priority = 'urgent') AS BIGINT) AS urgent_tickets
FROM tickets_opened
GROUP BY queue, CAST(opened_at AS DATE)
ORDER BY day, queue
