-- A reversal cancels the entry it refers to when that entry is in the ledger or in the same
-- batch; cancelled ids are kept so that a re-sent entry stays out. A reversal that finds
-- no entry refers to nothing the wallet system knows and is dropped.
CREATE TABLE IF NOT EXISTS wallet_ledger (
    entry_id      BIGINT PRIMARY KEY,
    wallet_id     VARCHAR,
    amount        DECIMAL(12,2),
    booked_at     TIMESTAMP,
    balance_after DECIMAL(14,2),
    overdrawn     BOOLEAN
);

CREATE TABLE IF NOT EXISTS wallet_summary (
    wallet_id          VARCHAR PRIMARY KEY,
    balance            DECIMAL(14,2),
    lowest_balance     DECIMAL(14,2),
    overdrawn_entries  BIGINT,
    first_overdrawn_at TIMESTAMP
);

CREATE TABLE IF NOT EXISTS wallet_position (
    wallet_id      VARCHAR PRIMARY KEY,
    last_booked_at TIMESTAMP,
    last_entry_id  BIGINT
);

CREATE TABLE IF NOT EXISTS cancelled_entries (
    entry_id BIGINT PRIMARY KEY
);

-- No key list a lookup joins against is ever empty (an empty one holds a placeholder key):
-- from an empty side DuckDB pushes no keys into the scan of the stored table and reads it whole.
CREATE TEMP TABLE batch_ids AS
SELECT entry_id FROM incoming.wallet_entries
UNION ALL SELECT entry_id FROM incoming.wallet_reversals;

INSERT INTO batch_ids SELECT coalesce(min(entry_id), 0) FROM batch_ids;

CREATE TEMP TABLE known_cancels AS
SELECT c.entry_id FROM cancelled_entries AS c
WHERE c.entry_id IN (SELECT entry_id FROM batch_ids);

CREATE TEMP TABLE new_cancels AS
SELECT DISTINCT r.entry_id FROM incoming.wallet_reversals AS r
WHERE r.entry_id NOT IN (SELECT entry_id FROM known_cancels)
  AND (r.entry_id IN (SELECT l.entry_id FROM wallet_ledger AS l
                      WHERE l.entry_id IN (SELECT entry_id FROM batch_ids))
       OR r.entry_id IN (SELECT entry_id FROM incoming.wallet_entries));

CREATE TEMP TABLE stored_rows AS
SELECT l.* FROM wallet_ledger AS l WHERE l.entry_id IN (SELECT entry_id FROM batch_ids);

-- Ledger rows the batch's reversals take out.
CREATE TEMP TABLE removed AS
SELECT * FROM stored_rows WHERE entry_id IN (SELECT entry_id FROM new_cancels);

CREATE TEMP TABLE fresh AS
SELECT DISTINCT ON (entry_id) entry_id, wallet_id, amount, booked_at
FROM incoming.wallet_entries
WHERE entry_id NOT IN (SELECT entry_id FROM stored_rows)
  AND entry_id NOT IN (SELECT entry_id FROM known_cancels)
  AND entry_id NOT IN (SELECT entry_id FROM new_cancels)
ORDER BY entry_id;

-- Every wallet the batch names gets a summary row, even when all its entries are cancelled.
CREATE TEMP TABLE wallet_keys AS
SELECT wallet_id FROM incoming.wallet_entries
UNION SELECT wallet_id FROM removed;

INSERT INTO wallet_keys SELECT coalesce(min(wallet_id), '') FROM wallet_keys;

CREATE TEMP TABLE summary_before AS
SELECT s.* FROM wallet_summary AS s WHERE s.wallet_id IN (SELECT wallet_id FROM wallet_keys);

CREATE TEMP TABLE position_before AS
SELECT p.* FROM wallet_position AS p WHERE p.wallet_id IN (SELECT wallet_id FROM wallet_keys);

-- Wallets carried again from 0: one lost an entry, or a new entry comes before its last one.
CREATE TEMP TABLE rewound AS
SELECT wallet_id FROM removed
UNION
SELECT f.wallet_id FROM fresh AS f JOIN position_before AS p ON p.wallet_id = f.wallet_id
WHERE (f.booked_at, f.entry_id) < (p.last_booked_at, p.last_entry_id);

CREATE TEMP TABLE rewound_keys AS
SELECT wallet_id FROM rewound UNION ALL SELECT coalesce(min(wallet_id), '') FROM rewound;

CREATE TEMP TABLE rewound_rows AS
SELECT l.entry_id, l.wallet_id, l.amount, l.booked_at
FROM wallet_ledger AS l WHERE l.wallet_id IN (SELECT wallet_id FROM rewound_keys);

-- The entries to carry, each with the balance its wallet opens at.
CREATE TEMP TABLE work AS
SELECT f.entry_id, f.wallet_id, f.amount, f.booked_at,
       coalesce(s.balance, 0) AS opening
FROM fresh AS f LEFT JOIN summary_before AS s ON s.wallet_id = f.wallet_id
WHERE f.wallet_id NOT IN (SELECT wallet_id FROM rewound)
UNION ALL
SELECT entry_id, wallet_id, amount, booked_at, 0
FROM (
    SELECT * FROM rewound_rows WHERE entry_id NOT IN (SELECT entry_id FROM new_cancels)
    UNION ALL
    SELECT * FROM fresh WHERE wallet_id IN (SELECT wallet_id FROM rewound)
) AS whole
WHERE wallet_id IN (SELECT wallet_id FROM rewound);

CREATE TEMP TABLE written AS
SELECT entry_id, wallet_id, amount, booked_at, balance_after, balance_after < 0 AS overdrawn
FROM (
    SELECT entry_id, wallet_id, amount, booked_at,
           CAST(opening + sum(amount) OVER (PARTITION BY wallet_id ORDER BY booked_at, entry_id
                                            ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
                AS DECIMAL(14,2)) AS balance_after
    FROM work
) AS carried;

-- What the carried rows add to a wallet's summary; a rewound wallet starts from nothing.
CREATE TEMP TABLE carried_figures AS
SELECT wallet_id, min(balance_after) AS lowest_balance,
       count(*) FILTER (WHERE overdrawn) AS overdrawn_entries,
       min(booked_at) FILTER (WHERE overdrawn) AS first_overdrawn_at
FROM written GROUP BY wallet_id;

CREATE TEMP TABLE closing AS
SELECT DISTINCT ON (wallet_id) wallet_id, balance_after, booked_at, entry_id
FROM written ORDER BY wallet_id, booked_at DESC, entry_id DESC;

CREATE TEMP TABLE touched AS
SELECT wallet_id FROM wallet_keys WHERE wallet_id <> ''
UNION SELECT wallet_id FROM rewound;

CREATE TEMP TABLE new_summary AS
SELECT t.wallet_id,
       CAST(CASE WHEN c.wallet_id IS NOT NULL THEN c.balance_after
                 WHEN r.wallet_id IS NOT NULL THEN 0
                 ELSE coalesce(s.balance, 0) END AS DECIMAL(14,2)) AS balance,
       CAST(CASE WHEN r.wallet_id IS NOT NULL OR s.lowest_balance IS NULL THEN f.lowest_balance
                 WHEN f.lowest_balance IS NULL THEN s.lowest_balance
                 ELSE least(s.lowest_balance, f.lowest_balance) END AS DECIMAL(14,2))
           AS lowest_balance,
       CAST(CASE WHEN r.wallet_id IS NOT NULL THEN 0 ELSE coalesce(s.overdrawn_entries, 0) END
            + coalesce(f.overdrawn_entries, 0) AS BIGINT) AS overdrawn_entries,
       CASE WHEN r.wallet_id IS NOT NULL THEN f.first_overdrawn_at
            ELSE coalesce(s.first_overdrawn_at, f.first_overdrawn_at) END AS first_overdrawn_at
FROM touched AS t
LEFT JOIN summary_before AS s ON s.wallet_id = t.wallet_id
LEFT JOIN rewound AS r ON r.wallet_id = t.wallet_id
LEFT JOIN carried_figures AS f ON f.wallet_id = t.wallet_id
LEFT JOIN closing AS c ON c.wallet_id = t.wallet_id;

CREATE TEMP TABLE new_position AS
SELECT t.wallet_id,
       CASE WHEN c.wallet_id IS NOT NULL THEN c.booked_at
            WHEN r.wallet_id IS NULL THEN p.last_booked_at END AS last_booked_at,
       CASE WHEN c.wallet_id IS NOT NULL THEN c.entry_id
            WHEN r.wallet_id IS NULL THEN p.last_entry_id END AS last_entry_id
FROM touched AS t
LEFT JOIN position_before AS p ON p.wallet_id = t.wallet_id
LEFT JOIN rewound AS r ON r.wallet_id = t.wallet_id
LEFT JOIN closing AS c ON c.wallet_id = t.wallet_id;

CREATE TEMP TABLE rewritten_ids AS
SELECT entry_id FROM rewound_rows
UNION ALL SELECT coalesce(min(entry_id), 0) FROM rewound_rows;

BEGIN TRANSACTION;

DELETE FROM wallet_ledger
WHERE entry_id IN (SELECT entry_id FROM rewritten_ids)
  AND wallet_id IN (SELECT wallet_id FROM rewound);

INSERT INTO wallet_ledger SELECT * FROM written;

INSERT INTO cancelled_entries SELECT entry_id FROM new_cancels;

DELETE FROM wallet_summary
WHERE wallet_id IN (SELECT wallet_id FROM wallet_keys)
  AND wallet_id IN (SELECT wallet_id FROM touched);

INSERT INTO wallet_summary SELECT * FROM new_summary;

DELETE FROM wallet_position
WHERE wallet_id IN (SELECT wallet_id FROM wallet_keys)
  AND wallet_id IN (SELECT wallet_id FROM touched);

INSERT INTO wallet_position SELECT * FROM new_position;

COMMIT;
