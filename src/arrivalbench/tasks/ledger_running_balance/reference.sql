SELECT
    entry_id,
    account_id,
    entry_type,
    amount,
    posted_at,
    row_number() OVER w AS entry_seq,
    CAST(sum(amount) OVER w AS DECIMAL(14,2)) AS balance_after
FROM ledger_entries
WINDOW w AS (PARTITION BY account_id ORDER BY posted_at, entry_id
             ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
