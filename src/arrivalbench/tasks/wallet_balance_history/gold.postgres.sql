-- Every delivered entry and reversal goes to a landing table as it comes; both tables are then
-- rebuilt from the landing tables, one record per id: an entry counts unless a reversal refers
-- to it, and the balances are the running sums of each wallet's counting entries.
CREATE TABLE IF NOT EXISTS entries_landing (
    entry_id  BIGINT,
    wallet_id VARCHAR,
    amount    DECIMAL(12,2),
    booked_at TIMESTAMP
);

CREATE TABLE IF NOT EXISTS reversals_landing (
    reversal_id BIGINT,
    entry_id    BIGINT,
    reversed_at TIMESTAMP
);

INSERT INTO entries_landing
SELECT entry_id, wallet_id, amount, booked_at FROM incoming.wallet_entries;

INSERT INTO reversals_landing
SELECT reversal_id, entry_id, reversed_at FROM incoming.wallet_reversals;

DROP TABLE IF EXISTS wallet_ledger;

CREATE TABLE wallet_ledger AS
SELECT entry_id, wallet_id, amount, booked_at, balance_after, balance_after < 0 AS overdrawn
FROM (
    SELECT e.entry_id, e.wallet_id, e.amount, e.booked_at,
           CAST(sum(e.amount) OVER (PARTITION BY e.wallet_id ORDER BY e.booked_at, e.entry_id
                                    ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
                AS DECIMAL(14,2)) AS balance_after
    FROM (SELECT DISTINCT ON (entry_id) * FROM entries_landing ORDER BY entry_id) AS e
    WHERE NOT EXISTS (SELECT 1 FROM reversals_landing AS r WHERE r.entry_id = e.entry_id)
) AS ledger;

DROP TABLE IF EXISTS wallet_summary;

CREATE TABLE wallet_summary AS
SELECT w.wallet_id,
       CAST(coalesce(c.balance_after, 0) AS DECIMAL(14,2)) AS balance,
       f.lowest_balance,
       coalesce(f.overdrawn_entries, 0) AS overdrawn_entries,
       f.first_overdrawn_at
FROM (SELECT DISTINCT wallet_id FROM entries_landing) AS w
LEFT JOIN (
    SELECT wallet_id, min(balance_after) AS lowest_balance,
           CAST(count(*) FILTER (WHERE overdrawn) AS BIGINT) AS overdrawn_entries,
           min(booked_at) FILTER (WHERE overdrawn) AS first_overdrawn_at
    FROM wallet_ledger GROUP BY wallet_id
) AS f ON f.wallet_id = w.wallet_id
LEFT JOIN (
    SELECT DISTINCT ON (wallet_id) wallet_id, balance_after
    FROM wallet_ledger ORDER BY wallet_id, booked_at DESC, entry_id DESC
) AS c ON c.wallet_id = w.wallet_id;
