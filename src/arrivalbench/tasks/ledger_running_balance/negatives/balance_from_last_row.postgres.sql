-- Append the entries the ledger does not have yet. Each account continues from its last row in
-- the ledger: its balance and position, plus the running sum of the new entries.
CREATE TABLE IF NOT EXISTS account_ledger (
    entry_id      BIGINT PRIMARY KEY,
    account_id    TEXT,
    entry_type    TEXT,
    amount        DECIMAL(12,2),
    posted_at     TIMESTAMP,
    entry_seq     BIGINT,
    balance_after DECIMAL(14,2)
);

INSERT INTO account_ledger
WITH fresh AS (
    SELECT DISTINCT ON (entry_id) entry_id, account_id, entry_type, amount, posted_at
    FROM incoming.ledger_entries
    WHERE entry_id NOT IN (SELECT entry_id FROM account_ledger)
    ORDER BY entry_id
),
last_row AS (
    SELECT account_id, entry_seq, balance_after
    FROM (SELECT *, row_number() OVER (PARTITION BY account_id
                                       ORDER BY posted_at DESC NULLS LAST,
                                                entry_id DESC NULLS LAST) AS rn
          FROM account_ledger) AS ranked
    WHERE rn = 1
)
SELECT
    f.entry_id,
    f.account_id,
    f.entry_type,
    f.amount,
    f.posted_at,
    COALESCE(l.entry_seq, 0) + row_number() OVER w,
    COALESCE(l.balance_after, 0) + sum(f.amount) OVER w
FROM fresh AS f
LEFT JOIN last_row AS l USING (account_id)
WINDOW w AS (PARTITION BY f.account_id ORDER BY f.posted_at, f.entry_id
             ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW);
