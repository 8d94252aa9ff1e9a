-- An entry counts unless some reversal refers to it; the balance is the running sum of the
-- wallet's counting entries in (booked_at, entry_id) order.
SELECT entry_id, wallet_id, amount, booked_at, balance_after, balance_after < 0 AS overdrawn
FROM (
    SELECT e.entry_id, e.wallet_id, e.amount, e.booked_at,
           CAST(sum(e.amount) OVER (PARTITION BY e.wallet_id ORDER BY e.booked_at, e.entry_id
                                    ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
                AS DECIMAL(14,2)) AS balance_after
    FROM wallet_entries AS e
    WHERE NOT EXISTS (SELECT 1 FROM wallet_reversals AS r WHERE r.entry_id = e.entry_id)
) AS ledger
