WITH reversed AS (
    SELECT DISTINCT ref_entry_id AS entry_id FROM journal_entries WHERE entry_kind = 'reversal'
),
in_force AS (
    SELECT ref_entry_id AS post_id, amount,
           row_number() OVER (PARTITION BY ref_entry_id
                              ORDER BY recorded_at DESC, entry_id DESC) AS rank_from_last
    FROM journal_entries
    WHERE entry_kind = 'correction'
      AND entry_id NOT IN (SELECT entry_id FROM reversed)
),
posts AS (
    SELECT p.account_id, p.business_day,
           p.entry_id NOT IN (SELECT entry_id FROM reversed) AS counts,
           coalesce(c.amount, p.amount) AS amount
    FROM journal_entries AS p
    LEFT JOIN in_force AS c ON c.post_id = p.entry_id AND c.rank_from_last = 1
    WHERE p.entry_kind = 'post'
)
SELECT
    account_id,
    business_day,
    CAST(sum(CASE WHEN counts THEN amount ELSE 0 END) AS DECIMAL(14,2)) AS net_amount,
    count(*) FILTER (WHERE counts) AS bookings
FROM posts
GROUP BY account_id, business_day
