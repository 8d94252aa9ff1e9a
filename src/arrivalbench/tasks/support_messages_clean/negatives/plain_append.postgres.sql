-- Append each delivery's messages.
CREATE TABLE IF NOT EXISTS support_messages (
    message_id  BIGINT,
    ticket_id   BIGINT,
    author_type VARCHAR,
    author_id   INTEGER,
    channel     VARCHAR,
    word_count  INTEGER,
    sent_at     TIMESTAMP,
    sent_date   DATE
);

INSERT INTO support_messages
SELECT
    message_id,
    ticket_id,
    author_type,
    author_id,
    channel,
    CASE WHEN trim(COALESCE(body, '')) = '' THEN 0
         ELSE cardinality(regexp_split_to_array(trim(body), '\s+')) END,
    sent_at,
    CAST(sent_at AS DATE)
FROM incoming.ticket_messages;
