SELECT
  account_id,
  currency,
  CAST(SUM(amount) AS DECIMAL(16,2)) AS balance,
  CAST(COUNT(*) AS BIGINT) AS postings,
  CAST(MAX(posted_at) AS TIMESTAMP) AS last_posted_at
FROM postings
GROUP BY account_id, currency
