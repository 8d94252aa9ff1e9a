SELECT
    CAST(entry_id AS BIGINT) AS entry_id,
    CAST(account_id AS VARCHAR) AS account_id,
    CAST(entry_type AS VARCHAR) AS entry_type,
    CAST(amount AS DECIMAL(12,2)) AS amount,
    CAST(posted_at AS TIMESTAMP) AS posted_at,
    CAST(row_number() OVER w AS BIGINT) AS entry_seq,
    CAST(sum(amount) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS DECIMAL(14,2)) AS balance_after
FROM ledger_entries
WINDOW w AS (PARTITION BY account_id ORDER BY posted_at, entry_id)
ORDER BY account_id, entry_seq
