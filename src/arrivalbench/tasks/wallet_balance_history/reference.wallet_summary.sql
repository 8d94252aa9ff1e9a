-- Every wallet with an entry, cancelled or not; the figures come from its counting entries.
WITH ledger AS (
    SELECT e.wallet_id, e.booked_at, e.entry_id,
           sum(e.amount) OVER (PARTITION BY e.wallet_id ORDER BY e.booked_at, e.entry_id
                               ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS balance_after
    FROM wallet_entries AS e
    WHERE NOT EXISTS (SELECT 1 FROM wallet_reversals AS r WHERE r.entry_id = e.entry_id)
),
figures AS (
    SELECT wallet_id,
           sum(CASE WHEN balance_after < 0 THEN 1 ELSE 0 END) AS overdrawn_entries,
           min(balance_after) AS lowest_balance,
           min(CASE WHEN balance_after < 0 THEN booked_at END) AS first_overdrawn_at
    FROM ledger GROUP BY wallet_id
),
closing AS (
    SELECT wallet_id, balance_after AS balance
    FROM (SELECT wallet_id, balance_after,
                 row_number() OVER (PARTITION BY wallet_id
                                    ORDER BY booked_at DESC, entry_id DESC) AS rank
          FROM ledger) AS ranked
    WHERE rank = 1
)
SELECT w.wallet_id,
       CAST(coalesce(c.balance, 0) AS DECIMAL(14,2)) AS balance,
       CAST(f.lowest_balance AS DECIMAL(14,2)) AS lowest_balance,
       CAST(coalesce(f.overdrawn_entries, 0) AS BIGINT) AS overdrawn_entries,
       f.first_overdrawn_at
FROM (SELECT DISTINCT wallet_id FROM wallet_entries) AS w
LEFT JOIN figures AS f ON f.wallet_id = w.wallet_id
LEFT JOIN closing AS c ON c.wallet_id = w.wallet_id
