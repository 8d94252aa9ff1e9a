-- Add each delivery's postings to the balances.
CREATE TABLE IF NOT EXISTS account_balances (
    account_id     TEXT,
    currency       TEXT,
    balance        DECIMAL(16,2),
    postings       BIGINT,
    last_posted_at TIMESTAMP,
    PRIMARY KEY (account_id, currency)
);

INSERT INTO account_balances AS b
SELECT account_id, currency, sum(amount), count(*), max(posted_at)
FROM incoming.postings
GROUP BY account_id, currency
ON CONFLICT (account_id, currency) DO UPDATE SET
    balance        = b.balance + EXCLUDED.balance,
    postings       = b.postings + EXCLUDED.postings,
    last_posted_at = greatest(b.last_posted_at, EXCLUDED.last_posted_at);
