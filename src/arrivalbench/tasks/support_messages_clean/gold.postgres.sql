-- The target is the message history: each run inserts the batch's messages whose id is not in
-- the table yet (NOT EXISTS), one row per message id.
CREATE TABLE IF NOT EXISTS support_messages (
    message_id  BIGINT PRIMARY KEY,
    ticket_id   BIGINT,
    author_type VARCHAR,
    author_id   INTEGER,
    channel     VARCHAR,
    word_count  INTEGER,
    sent_at     TIMESTAMP,
    sent_date   DATE
);

INSERT INTO support_messages
SELECT DISTINCT ON (m.message_id)
    m.message_id,
    m.ticket_id,
    m.author_type,
    m.author_id,
    m.channel,
    CASE WHEN trim(COALESCE(m.body, '')) = '' THEN 0
         ELSE cardinality(regexp_split_to_array(trim(m.body), '\s+')) END,
    m.sent_at,
    CAST(m.sent_at AS DATE)
FROM incoming.ticket_messages AS m
WHERE NOT EXISTS (SELECT 1 FROM support_messages AS s WHERE s.message_id = m.message_id)
ORDER BY m.message_id, m.sent_at;
