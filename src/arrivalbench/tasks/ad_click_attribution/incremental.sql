-- Incremental: impression_history and the target are keyed on their ids, so a run reads only
-- the stored ids its batch repeats. The clicks whose attribution the batch can change are its
-- new clicks and the stored clicks of the users its new impressions belong to; only those are
-- attributed again, from the stored impressions of their users and the new ones, and
-- rewritten. Everything commits together: a retried batch finds its records stored.
CREATE TABLE IF NOT EXISTS impression_history (
    impression_id VARCHAR PRIMARY KEY,
    campaign_id   INTEGER,
    user_id       VARCHAR,
    served_at     TIMESTAMP
);

CREATE TABLE IF NOT EXISTS attributed_clicks (
    click_id      VARCHAR PRIMARY KEY,
    user_id       VARCHAR,
    clicked_at    TIMESTAMP,
    impression_id VARCHAR,
    campaign_id   INTEGER
);

-- No key list a lookup joins against is ever empty (an empty one looks up ''): DuckDB pushes
-- the keys of a join's small side into the scan of the stored table, but from an empty side it
-- pushes nothing and reads the table whole. No id or user is ''.
CREATE OR REPLACE TEMP TABLE impression_ids AS
SELECT impression_id FROM incoming.impressions
UNION ALL SELECT coalesce(min(impression_id), '') FROM incoming.impressions;

CREATE OR REPLACE TEMP TABLE click_ids AS
SELECT click_id FROM incoming.clicks
UNION ALL SELECT coalesce(min(click_id), '') FROM incoming.clicks;

CREATE OR REPLACE TEMP TABLE fresh_impressions AS
SELECT DISTINCT ON (impression_id) impression_id, campaign_id, user_id, served_at
FROM incoming.impressions
WHERE impression_id NOT IN (SELECT h.impression_id FROM impression_history AS h
                            WHERE h.impression_id IN (SELECT impression_id FROM impression_ids))
ORDER BY impression_id;

CREATE OR REPLACE TEMP TABLE fresh_clicks AS
SELECT DISTINCT ON (click_id) click_id, user_id, clicked_at
FROM incoming.clicks
WHERE click_id NOT IN (SELECT c.click_id FROM attributed_clicks AS c
                       WHERE c.click_id IN (SELECT click_id FROM click_ids))
ORDER BY click_id;

-- Stored clicks a new impression may now be the last impression for.
CREATE OR REPLACE TEMP TABLE impression_users AS
SELECT DISTINCT user_id FROM fresh_impressions WHERE user_id IS NOT NULL
UNION ALL SELECT '' WHERE NOT EXISTS (SELECT 1 FROM fresh_impressions WHERE user_id IS NOT NULL);

CREATE OR REPLACE TEMP TABLE user_clicks AS
SELECT c.click_id, c.user_id, c.clicked_at FROM attributed_clicks AS c
WHERE c.user_id IN (SELECT user_id FROM impression_users);

CREATE OR REPLACE TEMP TABLE reattributed AS
SELECT c.click_id, c.user_id, c.clicked_at FROM user_clicks AS c
WHERE EXISTS (SELECT 1 FROM fresh_impressions AS i
              WHERE i.user_id = c.user_id AND i.served_at <= c.clicked_at
                AND i.served_at >= c.clicked_at - INTERVAL 24 HOUR);

CREATE OR REPLACE TEMP TABLE affected AS
SELECT * FROM fresh_clicks UNION ALL SELECT * FROM reattributed;

CREATE OR REPLACE TEMP TABLE affected_users AS
SELECT DISTINCT user_id FROM affected WHERE user_id IS NOT NULL
UNION ALL SELECT '' WHERE NOT EXISTS (SELECT 1 FROM affected WHERE user_id IS NOT NULL);

CREATE OR REPLACE TEMP TABLE candidates AS
SELECT h.impression_id, h.campaign_id, h.user_id, h.served_at FROM impression_history AS h
WHERE h.user_id IN (SELECT user_id FROM affected_users)
UNION ALL
SELECT impression_id, campaign_id, user_id, served_at FROM fresh_impressions;

CREATE OR REPLACE TEMP TABLE attributed AS
SELECT a.click_id, a.user_id, a.clicked_at, i.impression_id, i.campaign_id
FROM affected AS a
LEFT JOIN candidates AS i
  ON i.user_id = a.user_id
 AND i.served_at <= a.clicked_at
 AND i.served_at >= a.clicked_at - INTERVAL 24 HOUR
QUALIFY row_number() OVER (PARTITION BY a.click_id
                           ORDER BY i.served_at DESC NULLS LAST, i.impression_id DESC) = 1;

CREATE OR REPLACE TEMP TABLE rewritten_ids AS
SELECT click_id FROM reattributed
UNION ALL SELECT coalesce(min(click_id), '') FROM reattributed;

BEGIN TRANSACTION;

INSERT INTO impression_history SELECT * FROM fresh_impressions;

DELETE FROM attributed_clicks WHERE click_id IN (SELECT click_id FROM rewritten_ids);

INSERT INTO attributed_clicks SELECT * FROM attributed;

COMMIT;
