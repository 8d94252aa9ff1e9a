-- Incremental: the message ids stored so far are kept in a registry keyed (indexed) on the id.
-- A run looks up only the ids its batch carries and appends the messages not seen before, one
-- row per id, to the registry and the target together (one transaction, so a retried batch adds
-- nothing twice); it never reads the target.
-- DuckDB reads the whole stored side of a join whose other side ends up empty (a batch of new
-- ids only), so the registry holds one sentinel id (-1) that every lookup also asks for.
BEGIN TRANSACTION;

-- Created with its sentinel row, once (the statement does nothing when the table exists).
CREATE TABLE IF NOT EXISTS message_ids AS SELECT -1::BIGINT AS message_id;
CREATE UNIQUE INDEX IF NOT EXISTS message_ids_id ON message_ids (message_id);

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

CREATE OR REPLACE TEMP TABLE known AS
SELECT k.message_id FROM message_ids AS k
WHERE k.message_id IN (SELECT message_id FROM incoming.ticket_messages UNION ALL SELECT -1);

CREATE OR REPLACE TEMP TABLE fresh AS
SELECT message_id, ticket_id, author_type, author_id, channel, body, sent_at
FROM incoming.ticket_messages
WHERE message_id NOT IN (SELECT message_id FROM known)
QUALIFY row_number() OVER (PARTITION BY message_id ORDER BY sent_at) = 1;

INSERT INTO message_ids SELECT message_id FROM fresh;

INSERT INTO support_messages
SELECT
    message_id,
    ticket_id,
    author_type,
    author_id,
    channel,
    CASE WHEN trim(COALESCE(body, '')) = '' THEN 0
         ELSE len(regexp_split_to_array(trim(body), '\s+')) END,
    sent_at,
    CAST(sent_at AS DATE)
FROM fresh;

DROP TABLE fresh;
DROP TABLE known;

COMMIT;
