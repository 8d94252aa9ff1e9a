-- Every delivered entry goes to entries_landing as it comes; the table is then recomputed from
-- the landing table, one entry per id.
CREATE TABLE IF NOT EXISTS entries_landing (
    entry_id     BIGINT,
    entry_kind   VARCHAR,
    ref_entry_id BIGINT,
    account_id   VARCHAR,
    business_day DATE,
    amount       DECIMAL(12,2),
    recorded_at  TIMESTAMP
);

INSERT INTO entries_landing
SELECT entry_id, entry_kind, ref_entry_id, account_id, business_day, amount, recorded_at
FROM incoming.journal_entries;

DROP TABLE IF EXISTS account_day_net_amounts;

CREATE TABLE account_day_net_amounts AS
WITH entries AS (
    SELECT DISTINCT ON (entry_id) *
    FROM entries_landing
    ORDER BY entry_id
),
reversed AS (
    SELECT DISTINCT ref_entry_id AS entry_id FROM entries WHERE entry_kind = 'reversal'
),
in_force AS (
    SELECT ref_entry_id AS post_id, amount,
           row_number() OVER (PARTITION BY ref_entry_id
                              ORDER BY recorded_at DESC, entry_id DESC) AS rank_from_last
    FROM entries
    WHERE entry_kind = 'correction'
      AND entry_id NOT IN (SELECT entry_id FROM reversed)
),
posts AS (
    SELECT p.account_id, p.business_day,
           p.entry_id NOT IN (SELECT entry_id FROM reversed) AS counts,
           coalesce(c.amount, p.amount) AS amount
    FROM entries AS p
    LEFT JOIN in_force AS c ON c.post_id = p.entry_id AND c.rank_from_last = 1
    WHERE p.entry_kind = 'post'
)
SELECT
    account_id,
    business_day,
    CAST(sum(CASE WHEN counts THEN amount ELSE 0 END) AS DECIMAL(14,2)) AS net_amount,
    CAST(count(*) FILTER (WHERE counts) AS BIGINT) AS bookings
FROM posts
GROUP BY account_id, business_day;
