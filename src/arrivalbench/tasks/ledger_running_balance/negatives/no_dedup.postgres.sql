-- Every delivered entry goes to entries_landing; the ledger is recomputed from it.
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
SELECT
    entry_id,
    account_id,
    entry_type,
    amount,
    posted_at,
    row_number() OVER w AS entry_seq,
    CAST(sum(amount) OVER w AS DECIMAL(14,2)) AS balance_after
FROM entries_landing
WINDOW w AS (PARTITION BY account_id ORDER BY posted_at, entry_id
             ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW);
