-- Keep a raw copy of the helpdesk feed (same columns as the feed), each message id once, and
-- rebuild the message table from it.
CREATE TABLE IF NOT EXISTS ticket_messages_raw AS
SELECT * FROM incoming.ticket_messages LIMIT 0;

INSERT INTO ticket_messages_raw
SELECT DISTINCT * FROM incoming.ticket_messages
WHERE message_id NOT IN (SELECT message_id FROM ticket_messages_raw);

DROP TABLE IF EXISTS support_messages;

CREATE TABLE support_messages AS
SELECT
    message_id,
    ticket_id,
    author_type,
    author_id,
    channel,
    CASE WHEN trim(COALESCE(body, '')) = '' THEN 0
         ELSE cardinality(regexp_split_to_array(trim(body), '\s+')) END AS word_count,
    sent_at,
    CAST(sent_at AS DATE) AS sent_date
FROM ticket_messages_raw;
