-- Each post's standing: whether a reversal names it, and else the amount of its last correction
-- that no reversal names, or its own amount.
WITH posts AS (
    SELECT entry_id, account_id, business_day, amount
    FROM journal_entries WHERE entry_kind = 'post'
),
live_corrections AS (
    SELECT c.entry_id, c.ref_entry_id, c.amount, c.recorded_at
    FROM journal_entries AS c
    WHERE c.entry_kind = 'correction'
      AND NOT EXISTS (SELECT 1 FROM journal_entries AS r
                      WHERE r.entry_kind = 'reversal' AND r.ref_entry_id = c.entry_id)
),
standing AS (
    SELECT p.account_id, p.business_day,
           NOT EXISTS (SELECT 1 FROM journal_entries AS r
                       WHERE r.entry_kind = 'reversal' AND r.ref_entry_id = p.entry_id)
               AS counts,
           coalesce((SELECT lc.amount FROM live_corrections AS lc
                     WHERE lc.ref_entry_id = p.entry_id
                     ORDER BY lc.recorded_at DESC, lc.entry_id DESC LIMIT 1), p.amount)
               AS amount
    FROM posts AS p
)
SELECT
    CAST(account_id AS VARCHAR) AS account_id,
    CAST(business_day AS DATE) AS business_day,
    CAST(coalesce(sum(CASE WHEN counts THEN amount END), 0) AS DECIMAL(14,2)) AS net_amount,
    CAST(count(*) FILTER (WHERE counts) AS BIGINT) AS bookings
FROM standing
GROUP BY account_id, business_day
