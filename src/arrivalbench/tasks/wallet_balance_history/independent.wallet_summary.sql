-- One row per entry_id (the same record may be delivered several times).
WITH entries AS (
    SELECT DISTINCT ON (entry_id) entry_id, wallet_id, amount, booked_at
    FROM wallet_entries
    ORDER BY entry_id
),
-- An entry is cancelled by at least one reversal (several reversals cancel it once).
cancelled_ids AS (
    SELECT DISTINCT entry_id FROM wallet_reversals WHERE entry_id IS NOT NULL
),
live_entries AS (
    SELECT e.*
    FROM entries e
    WHERE e.entry_id NOT IN (SELECT entry_id FROM cancelled_ids)
),
ledger AS (
    SELECT
        entry_id, wallet_id, booked_at,
        SUM(amount) OVER (
            PARTITION BY wallet_id ORDER BY booked_at, entry_id
            ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
        ) AS balance_after
    FROM live_entries
),
live_stats AS (
    SELECT
        wallet_id,
        arg_max(balance_after, (booked_at, entry_id)) AS balance,
        MIN(balance_after)                            AS lowest_balance,
        COUNT(*) FILTER (WHERE balance_after < 0)     AS overdrawn_entries,
        -- order is booked_at then entry_id, so the first one has the minimal booked_at
        MIN(booked_at) FILTER (WHERE balance_after < 0) AS first_overdrawn_at
    FROM ledger
    GROUP BY wallet_id
),
-- every wallet with at least one entry received, cancelled or not
wallets AS (
    SELECT DISTINCT wallet_id FROM entries
)
SELECT
    CAST(w.wallet_id AS VARCHAR)                          AS wallet_id,
    CAST(COALESCE(s.balance, 0) AS DECIMAL(14,2))         AS balance,
    CAST(s.lowest_balance AS DECIMAL(14,2))               AS lowest_balance,
    CAST(COALESCE(s.overdrawn_entries, 0) AS BIGINT)      AS overdrawn_entries,
    CAST(s.first_overdrawn_at AS TIMESTAMP)               AS first_overdrawn_at
FROM wallets w
LEFT JOIN live_stats s ON s.wallet_id IS NOT DISTINCT FROM w.wallet_id
