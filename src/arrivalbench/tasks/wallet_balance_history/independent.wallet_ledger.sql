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
with_balance AS (
    SELECT
        entry_id, wallet_id, amount, booked_at,
        -- running balance per wallet, booked_at then entry id order
        CAST(SUM(amount) OVER (
            PARTITION BY wallet_id ORDER BY booked_at, entry_id
            ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
        ) AS DECIMAL(14,2)) AS balance_after
    FROM live_entries
)
SELECT
    CAST(entry_id AS BIGINT)        AS entry_id,
    CAST(wallet_id AS VARCHAR)      AS wallet_id,
    CAST(amount AS DECIMAL(12,2))   AS amount,
    CAST(booked_at AS TIMESTAMP)    AS booked_at,
    balance_after,
    COALESCE(balance_after < 0, false) AS overdrawn   -- exactly 0 is not overdrawn
FROM with_balance
