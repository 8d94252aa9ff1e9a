SELECT
    message_id,
    ticket_id,
    author_type,
    author_id,
    channel,
    CASE WHEN trim(COALESCE(body, '')) = '' THEN 0
         ELSE len(regexp_split_to_array(trim(body), '\s+')) END AS word_count,
    sent_at,
    CAST(sent_at AS DATE) AS sent_date
FROM ticket_messages
