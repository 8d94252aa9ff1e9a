-- Every delivered entry goes to entries_landing as it comes; the ledger is then recomputed from
-- the landing table, one row per entry id, with window functions over each account's history.
CREATE TABLE IF NOT EXISTS entries_landing (
    entry_id   BIGINT,
    account_id TEXT,
    entry_type TEXT,
    amount     DECIMAL(12,2),
    memo       TEXT,
    posted_at  TIMESTAMP
);

INSERT INTO entries_landing
SELECT entry_id, account_id, entry_type, amount, memo, posted_at
FROM incoming.ledger_entries;

DROP TABLE IF EXISTS account_ledger;

CREATE TABLE account_ledger AS
WITH entries AS (
    SELECT DISTINCT ON (entry_id) *
    FROM entries_landing
    ORDER BY entry_id
)
SELECT
    entry_id,
    account_id,
    entry_type,
    amount,
    posted_at,
    row_number() OVER w AS entry_seq,
    CAST(sum(amount) OVER w AS DECIMAL(14,2)) AS balance_after
FROM entries
WINDOW w AS (PARTITION BY account_id ORDER BY posted_at, entry_id
             ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW);
