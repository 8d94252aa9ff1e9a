-- One transaction per batch: only postings at or after the newest posting booked so far are
-- new; they are recorded and added to the balances.
BEGIN TRANSACTION;

CREATE TABLE IF NOT EXISTS booked_postings (posting_id BIGINT PRIMARY KEY, posted_at TIMESTAMP);

CREATE TEMP TABLE fresh AS
SELECT DISTINCT posting_id, account_id, currency, amount, posted_at
FROM incoming.postings
WHERE posting_id NOT IN (SELECT posting_id FROM booked_postings)
  AND posted_at >= (SELECT COALESCE(max(posted_at), TIMESTAMP '1970-01-01') FROM booked_postings);

INSERT INTO booked_postings SELECT posting_id, posted_at FROM fresh;

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
FROM fresh
GROUP BY account_id, currency
ON CONFLICT (account_id, currency) DO UPDATE SET
    balance        = b.balance + EXCLUDED.balance,
    postings       = b.postings + EXCLUDED.postings,
    last_posted_at = greatest(b.last_posted_at, EXCLUDED.last_posted_at);

COMMIT;
