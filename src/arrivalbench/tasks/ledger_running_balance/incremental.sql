-- Incremental: the ledger is keyed on the entry id and account_state keeps, per account, the
-- number of entries, the balance and the position (posted_at, entry_id) of the latest entry.
-- A run reads the stored ids its batch repeats and the state of the accounts it touches. New
-- entries that all come after an account's latest one continue its sequence and balance from
-- the state; an account that receives an earlier entry has its entries read and renumbered
-- (the only case that reads an account's history). Everything commits together: a retried
-- batch finds its entries in the ledger.
CREATE TABLE IF NOT EXISTS account_ledger (
    entry_id      BIGINT PRIMARY KEY,
    account_id    VARCHAR,
    entry_type    VARCHAR,
    amount        DECIMAL(12,2),
    posted_at     TIMESTAMP,
    entry_seq     BIGINT,
    balance_after DECIMAL(14,2)
);

CREATE TABLE IF NOT EXISTS account_state (
    account_id    VARCHAR PRIMARY KEY,
    entries       BIGINT,
    balance       DECIMAL(14,2),
    last_posted   TIMESTAMP,
    last_entry_id BIGINT
);

-- No key list a lookup joins against is ever empty (an empty one holds a placeholder key):
-- DuckDB pushes the keys of a join's small side into the scan of the stored table, but from an
-- empty side it pushes nothing and reads the table whole. The deletes also require the key to
-- be a real one, so that a stored placeholder key is never deleted by mistake.
CREATE OR REPLACE TEMP TABLE batch_ids AS
SELECT entry_id FROM incoming.ledger_entries
UNION ALL SELECT coalesce(min(entry_id), 0) FROM incoming.ledger_entries;

CREATE OR REPLACE TEMP TABLE known AS
SELECT l.entry_id FROM account_ledger AS l WHERE l.entry_id IN (SELECT entry_id FROM batch_ids);

CREATE OR REPLACE TEMP TABLE fresh AS
SELECT DISTINCT ON (entry_id) entry_id, account_id, entry_type, amount, posted_at
FROM incoming.ledger_entries
WHERE entry_id NOT IN (SELECT entry_id FROM known)
ORDER BY entry_id;

CREATE OR REPLACE TEMP TABLE account_keys AS
SELECT DISTINCT account_id FROM fresh
UNION ALL SELECT coalesce(min(account_id), '') FROM fresh;

CREATE OR REPLACE TEMP TABLE stored AS
SELECT s.* FROM account_state AS s WHERE s.account_id IN (SELECT account_id FROM account_keys);

-- Accounts whose new entries do not all come after their latest stored entry.
CREATE OR REPLACE TEMP TABLE reordered AS
SELECT DISTINCT f.account_id FROM fresh AS f JOIN stored AS s USING (account_id)
WHERE (f.posted_at, f.entry_id) < (s.last_posted, s.last_entry_id);

CREATE OR REPLACE TEMP TABLE reordered_keys AS
SELECT account_id FROM reordered
UNION ALL SELECT coalesce(min(account_id), '') FROM reordered;

-- Appended entries: numbered and summed on from the account's state.
CREATE OR REPLACE TEMP TABLE appended AS
SELECT f.entry_id, f.account_id, f.entry_type, f.amount, f.posted_at,
       COALESCE(s.entries, 0) + row_number() OVER w AS entry_seq,
       CAST(COALESCE(s.balance, 0) + sum(f.amount) OVER w AS DECIMAL(14,2)) AS balance_after
FROM fresh AS f LEFT JOIN stored AS s USING (account_id)
WHERE f.account_id NOT IN (SELECT account_id FROM reordered)
WINDOW w AS (PARTITION BY f.account_id ORDER BY f.posted_at, f.entry_id
             ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW);

-- Reordered accounts: every entry renumbered from the account's ledger and the new entries.
CREATE OR REPLACE TEMP TABLE renumbered AS
SELECT entry_id, account_id, entry_type, amount, posted_at,
       row_number() OVER w AS entry_seq,
       CAST(sum(amount) OVER w AS DECIMAL(14,2)) AS balance_after
FROM (
    SELECT l.entry_id, l.account_id, l.entry_type, l.amount, l.posted_at
    FROM account_ledger AS l WHERE l.account_id IN (SELECT account_id FROM reordered_keys)
    UNION ALL
    SELECT entry_id, account_id, entry_type, amount, posted_at
    FROM fresh WHERE account_id IN (SELECT account_id FROM reordered)
)
WHERE account_id IN (SELECT account_id FROM reordered)
WINDOW w AS (PARTITION BY account_id ORDER BY posted_at, entry_id
             ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW);

CREATE OR REPLACE TEMP TABLE written AS
SELECT * FROM appended UNION ALL SELECT * FROM renumbered;

CREATE OR REPLACE TEMP TABLE new_state AS
SELECT account_id, max(entry_seq) AS entries,
       arg_max(balance_after, entry_seq) AS balance,
       arg_max(posted_at, entry_seq) AS last_posted,
       arg_max(entry_id, entry_seq) AS last_entry_id
FROM written
GROUP BY account_id;

CREATE OR REPLACE TEMP TABLE renumbered_ids AS
SELECT entry_id FROM renumbered UNION ALL SELECT coalesce(min(entry_id), 0) FROM renumbered;

BEGIN TRANSACTION;

DELETE FROM account_ledger
WHERE entry_id IN (SELECT entry_id FROM renumbered_ids)
  AND entry_id IN (SELECT entry_id FROM renumbered);

INSERT INTO account_ledger SELECT * FROM written;

DELETE FROM account_state
WHERE account_id IN (SELECT account_id FROM account_keys)
  AND account_id IN (SELECT account_id FROM new_state);

INSERT INTO account_state SELECT * FROM new_state;

COMMIT;
