SELECT
    CAST(message_id AS BIGINT) AS message_id,
    CAST(ticket_id AS BIGINT) AS ticket_id,
    CAST(author_type AS VARCHAR) AS author_type,
    CAST(author_id AS INTEGER) AS author_id,
    CAST(channel AS VARCHAR) AS channel,
    CAST(COALESCE(len(regexp_extract_all(body, '[^\s]+')), 0) AS INTEGER) AS word_count,
    CAST(sent_at AS TIMESTAMP) AS sent_at,
    CAST(sent_at AS DATE) AS sent_date
FROM ticket_messages
ORDER BY message_id
