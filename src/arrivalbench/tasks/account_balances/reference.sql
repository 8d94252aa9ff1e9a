SELECT account_id, currency, sum(amount) AS balance, count(*) AS postings,
       max(posted_at) AS last_posted_at
FROM postings
GROUP BY account_id, currency
