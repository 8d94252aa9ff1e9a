-- Incremental: keyed stores, each read only where the batch touches it: the ids of the
-- impressions counted, the (campaign, user, day) triples seen, each user's first day per
-- campaign, and the counts per campaign and day. The batch's new impressions add to their
-- groups' counts, its new triples to their groups' reach, and a user whose first day with a
-- campaign is new or earlier than the stored one moves one unit of new reach between days.
-- Only the groups those changes touch are read and rewritten, all in one transaction: a
-- retried batch finds its impressions counted.
CREATE TABLE IF NOT EXISTS counted_impressions (impression_id VARCHAR PRIMARY KEY);

-- Keyed on one text column each (campaign:user[:day]): DuckDB filters a scan by the keys of a
-- small join side reliably on one column, less so on several.
CREATE TABLE IF NOT EXISTS campaign_user_days (triple VARCHAR PRIMARY KEY);

CREATE TABLE IF NOT EXISTS campaign_user_first (
    pair      VARCHAR PRIMARY KEY,
    first_day DATE
);

CREATE TABLE IF NOT EXISTS reach_counts (
    campaign_id INTEGER,
    day         DATE,
    impressions BIGINT,
    with_user   BIGINT,
    reach       BIGINT,
    new_reach   BIGINT,
    PRIMARY KEY (campaign_id, day)
);

CREATE TABLE IF NOT EXISTS campaign_reach_daily (
    campaign_id   INTEGER,
    day           DATE,
    impressions   BIGINT,
    reach         BIGINT,
    new_reach     BIGINT,
    avg_frequency DOUBLE,
    PRIMARY KEY (campaign_id, day)
);

-- No key list a lookup joins against is ever empty (an empty one holds a placeholder key):
-- DuckDB pushes the keys of a join's small side into the scan of the stored table, but from an
-- empty side it pushes nothing and reads the table whole. Placeholders are only looked up; a
-- placeholder group is rewritten from its own stored row, so it never changes.
CREATE OR REPLACE TEMP TABLE batch_ids AS
SELECT impression_id FROM incoming.impressions_served
UNION ALL SELECT coalesce(min(impression_id), '') FROM incoming.impressions_served;

CREATE OR REPLACE TEMP TABLE known AS
SELECT c.impression_id FROM counted_impressions AS c
WHERE c.impression_id IN (SELECT impression_id FROM batch_ids);

CREATE OR REPLACE TEMP TABLE fresh AS
SELECT DISTINCT ON (impression_id) impression_id, campaign_id, user_id,
       CAST(served_at AS DATE) AS day
FROM incoming.impressions_served
WHERE impression_id NOT IN (SELECT impression_id FROM known)
ORDER BY impression_id;

CREATE OR REPLACE TEMP TABLE triples AS
SELECT DISTINCT campaign_id, user_id, day, campaign_id || ':' || user_id AS pair,
       campaign_id || ':' || user_id || ':' || day AS triple
FROM fresh WHERE user_id IS NOT NULL;

CREATE OR REPLACE TEMP TABLE triple_keys AS
SELECT triple FROM triples UNION ALL SELECT coalesce(min(triple), '') FROM triples;

CREATE OR REPLACE TEMP TABLE new_triples AS
SELECT * FROM triples
WHERE triple NOT IN (SELECT u.triple FROM campaign_user_days AS u
                     WHERE u.triple IN (SELECT triple FROM triple_keys));

CREATE OR REPLACE TEMP TABLE batch_users AS
SELECT pair, any_value(campaign_id) AS campaign_id, min(day) AS first_day
FROM triples GROUP BY pair;

CREATE OR REPLACE TEMP TABLE pair_keys AS
SELECT pair FROM batch_users UNION ALL SELECT coalesce(min(pair), '') FROM batch_users;

CREATE OR REPLACE TEMP TABLE stored_first AS
SELECT f.pair, f.first_day FROM campaign_user_first AS f
WHERE f.pair IN (SELECT pair FROM pair_keys);

CREATE OR REPLACE TEMP TABLE first_moves AS
SELECT b.pair, b.campaign_id, s.first_day AS old_day, b.first_day AS new_day
FROM batch_users AS b LEFT JOIN stored_first AS s USING (pair)
WHERE s.first_day IS NULL OR b.first_day < s.first_day;

CREATE OR REPLACE TEMP TABLE group_delta AS
SELECT campaign_id, day, sum(impressions) AS impressions, sum(with_user) AS with_user,
       sum(reach) AS reach, sum(new_reach) AS new_reach
FROM (
    SELECT campaign_id, day, count(*) AS impressions, count(user_id) AS with_user,
           0 AS reach, 0 AS new_reach
    FROM fresh GROUP BY campaign_id, day
    UNION ALL SELECT campaign_id, day, 0, 0, 1, 0 FROM new_triples
    UNION ALL SELECT campaign_id, new_day, 0, 0, 0, 1 FROM first_moves
    UNION ALL SELECT campaign_id, old_day, 0, 0, 0, -1 FROM first_moves WHERE old_day IS NOT NULL
)
GROUP BY campaign_id, day;

CREATE OR REPLACE TEMP TABLE group_keys AS
SELECT campaign_id, day FROM group_delta
UNION ALL SELECT 0, DATE '1970-01-01' WHERE NOT EXISTS (SELECT 1 FROM group_delta);

CREATE OR REPLACE TEMP TABLE now AS
SELECT campaign_id, day, sum(impressions) AS impressions, sum(with_user) AS with_user,
       sum(reach) AS reach, sum(new_reach) AS new_reach
FROM (
    SELECT r.* FROM reach_counts AS r
    JOIN group_keys AS k ON r.campaign_id = k.campaign_id AND r.day = k.day
    UNION ALL
    SELECT * FROM group_delta
)
GROUP BY campaign_id, day;

CREATE OR REPLACE TEMP TABLE moved_keys AS
SELECT pair FROM first_moves WHERE old_day IS NOT NULL
UNION ALL SELECT '' WHERE NOT EXISTS (SELECT 1 FROM first_moves WHERE old_day IS NOT NULL);

BEGIN TRANSACTION;

INSERT INTO counted_impressions SELECT impression_id FROM fresh;

INSERT INTO campaign_user_days SELECT triple FROM new_triples;

DELETE FROM campaign_user_first WHERE pair IN (SELECT pair FROM moved_keys);

INSERT INTO campaign_user_first SELECT pair, new_day FROM first_moves;

DELETE FROM reach_counts AS r USING group_keys AS k
WHERE r.campaign_id = k.campaign_id AND r.day = k.day;

INSERT INTO reach_counts SELECT * FROM now;

DELETE FROM campaign_reach_daily AS t USING group_keys AS k
WHERE t.campaign_id = k.campaign_id AND t.day = k.day;

INSERT INTO campaign_reach_daily
SELECT campaign_id, day, impressions, reach, new_reach,
       CASE WHEN reach > 0 THEN with_user / reach END
FROM now;

COMMIT;
