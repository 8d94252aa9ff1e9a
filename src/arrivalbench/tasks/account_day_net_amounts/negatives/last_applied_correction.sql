-- Posts keep their standing in post_state; a correction received replaces the amount in
-- force, and the table moves by the change in each post's contribution.
CREATE TABLE IF NOT EXISTS account_day_net_amounts (
    account_id   VARCHAR,
    business_day DATE,
    net_amount   DECIMAL(14,2),
    bookings     BIGINT
);

CREATE TABLE IF NOT EXISTS seen_entries (entry_id BIGINT PRIMARY KEY);

CREATE TABLE IF NOT EXISTS corrections (
    entry_id     BIGINT PRIMARY KEY,
    ref_entry_id BIGINT,
    amount       DECIMAL(12,2),
    recorded_at  TIMESTAMP
);

CREATE TABLE IF NOT EXISTS reversals (entry_id BIGINT PRIMARY KEY, ref_entry_id BIGINT);

CREATE TABLE IF NOT EXISTS post_state (
    post_id      BIGINT PRIMARY KEY,
    account_id   VARCHAR,
    business_day DATE,
    amount       DECIMAL(12,2),
    counts       BOOLEAN,
    current      DECIMAL(12,2)
);

CREATE TEMP TABLE batch_ids AS
SELECT entry_id FROM incoming.journal_entries
UNION ALL SELECT coalesce(min(entry_id), 0) FROM incoming.journal_entries;

CREATE TEMP TABLE known AS
SELECT s.entry_id FROM seen_entries AS s WHERE s.entry_id IN (SELECT entry_id FROM batch_ids);

CREATE TEMP TABLE fresh AS
SELECT DISTINCT ON (entry_id) *
FROM incoming.journal_entries
WHERE entry_id NOT IN (SELECT entry_id FROM known)
ORDER BY entry_id;

CREATE TEMP TABLE reversal_refs AS
SELECT ref_entry_id AS entry_id FROM fresh WHERE entry_kind = 'reversal'
UNION ALL SELECT 0;

-- The posts this batch concerns.
CREATE TEMP TABLE affected AS
SELECT entry_id AS post_id FROM fresh WHERE entry_kind = 'post'
UNION SELECT ref_entry_id FROM fresh WHERE entry_kind IN ('correction', 'reversal')
UNION SELECT c.ref_entry_id FROM corrections AS c
      WHERE c.entry_id IN (SELECT entry_id FROM reversal_refs)
UNION SELECT 0;

CREATE TEMP TABLE old_state AS
SELECT s.* FROM post_state AS s WHERE s.post_id IN (SELECT post_id FROM affected);

CREATE TEMP TABLE all_posts AS
SELECT post_id, account_id, business_day, amount FROM old_state
UNION ALL
SELECT entry_id, account_id, business_day, amount FROM fresh WHERE entry_kind = 'post';

CREATE TEMP TABLE all_corrections AS
SELECT c.entry_id, c.ref_entry_id, c.amount, c.recorded_at, 0 AS arrived FROM corrections AS c
WHERE c.ref_entry_id IN (SELECT post_id FROM affected)
UNION ALL
SELECT entry_id, ref_entry_id, amount, recorded_at, 1 FROM fresh WHERE entry_kind = 'correction';

CREATE TEMP TABLE named AS
SELECT post_id AS entry_id FROM affected
UNION SELECT entry_id FROM all_corrections;

CREATE TEMP TABLE all_reversals AS
SELECT r.ref_entry_id FROM reversals AS r WHERE r.ref_entry_id IN (SELECT entry_id FROM named)
UNION ALL
SELECT ref_entry_id FROM fresh WHERE entry_kind = 'reversal';

CREATE TEMP TABLE last_in_force AS
SELECT DISTINCT ON (ref_entry_id) ref_entry_id AS post_id, amount
FROM all_corrections
WHERE entry_id NOT IN (SELECT ref_entry_id FROM all_reversals)
ORDER BY ref_entry_id, arrived DESC, recorded_at DESC, entry_id DESC;

CREATE TEMP TABLE new_state AS
SELECT p.post_id, p.account_id, p.business_day, p.amount,
       p.post_id NOT IN (SELECT ref_entry_id FROM all_reversals) AS counts,
       coalesce(l.amount, p.amount) AS current
FROM all_posts AS p LEFT JOIN last_in_force AS l ON l.post_id = p.post_id;

-- What each account and day gains: the posts' new contribution less their old one.
CREATE TEMP TABLE day_delta AS
SELECT account_id, business_day, sum(net) AS net, sum(n) AS n
FROM (
    SELECT account_id, business_day, CASE WHEN counts THEN current ELSE 0 END AS net,
           CASE WHEN counts THEN 1 ELSE 0 END AS n
    FROM new_state
    UNION ALL
    SELECT account_id, business_day, CASE WHEN counts THEN -current ELSE 0 END,
           CASE WHEN counts THEN -1 ELSE 0 END
    FROM old_state
) AS changes
GROUP BY account_id, business_day;

CREATE TEMP TABLE touched_days AS
SELECT DISTINCT business_day FROM day_delta
UNION ALL SELECT coalesce(min(business_day), DATE '1900-01-01') FROM day_delta;

CREATE TEMP TABLE old_rows AS
SELECT t.* FROM account_day_net_amounts AS t
WHERE t.business_day IN (SELECT business_day FROM touched_days);

CREATE TEMP TABLE new_rows AS
SELECT d.account_id, d.business_day,
       CAST(coalesce(o.net_amount, 0) + d.net AS DECIMAL(14,2)) AS net_amount,
       CAST(coalesce(o.bookings, 0) + d.n AS BIGINT) AS bookings
FROM day_delta AS d
LEFT JOIN old_rows AS o ON o.account_id = d.account_id AND o.business_day = d.business_day;

BEGIN TRANSACTION;

DELETE FROM account_day_net_amounts
WHERE business_day IN (SELECT business_day FROM touched_days)
  AND (account_id, business_day) IN (SELECT account_id, business_day FROM new_rows);

INSERT INTO account_day_net_amounts SELECT * FROM new_rows;

DELETE FROM post_state
WHERE post_id IN (SELECT post_id FROM affected)
  AND post_id IN (SELECT post_id FROM new_state);

INSERT INTO post_state
SELECT post_id, account_id, business_day, amount, counts, current FROM new_state;

INSERT INTO corrections
SELECT entry_id, ref_entry_id, amount, recorded_at FROM fresh WHERE entry_kind = 'correction';

INSERT INTO reversals
SELECT entry_id, ref_entry_id FROM fresh WHERE entry_kind = 'reversal';

INSERT INTO seen_entries SELECT entry_id FROM fresh;

COMMIT;
