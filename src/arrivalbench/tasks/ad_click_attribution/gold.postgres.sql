-- Both feeds are kept once per id in history tables. The clicks whose attribution the batch can
-- change (the batch's own clicks, and every click of a user the batch brings an impression or
-- a click for) are deleted from the target and inserted again, attributed from the histories.
CREATE TABLE IF NOT EXISTS impression_history (
    impression_id TEXT PRIMARY KEY,
    campaign_id   INTEGER,
    user_id       TEXT,
    served_at     TIMESTAMP
);

CREATE TABLE IF NOT EXISTS click_history (
    click_id   TEXT PRIMARY KEY,
    user_id    TEXT,
    clicked_at TIMESTAMP
);

CREATE TABLE IF NOT EXISTS attributed_clicks (
    click_id      TEXT,
    user_id       TEXT,
    clicked_at    TIMESTAMP,
    impression_id TEXT,
    campaign_id   INTEGER
);

INSERT INTO impression_history
SELECT DISTINCT ON (impression_id) impression_id, campaign_id, user_id, served_at
FROM incoming.impressions
ORDER BY impression_id
ON CONFLICT DO NOTHING;

INSERT INTO click_history
SELECT DISTINCT ON (click_id) click_id, user_id, clicked_at
FROM incoming.clicks
ORDER BY click_id
ON CONFLICT DO NOTHING;

CREATE TEMP TABLE affected AS
SELECT click_id
FROM click_history
WHERE click_id IN (SELECT click_id FROM incoming.clicks)
   OR user_id IN (SELECT user_id FROM incoming.impressions
                  UNION SELECT user_id FROM incoming.clicks);

DELETE FROM attributed_clicks
WHERE click_id IN (SELECT click_id FROM affected);

INSERT INTO attributed_clicks
SELECT click_id, user_id, clicked_at, impression_id, campaign_id
FROM (
    SELECT
        c.click_id,
        c.user_id,
        c.clicked_at,
        i.impression_id,
        i.campaign_id,
        row_number() OVER (PARTITION BY c.click_id
                           ORDER BY i.served_at DESC NULLS LAST,
                                    i.impression_id DESC NULLS LAST) AS rn
    FROM click_history AS c
    LEFT JOIN impression_history AS i
      ON i.user_id = c.user_id
     AND i.served_at <= c.clicked_at
     AND i.served_at >= c.clicked_at - INTERVAL '24 hours'
    WHERE c.click_id IN (SELECT click_id FROM affected)
) AS ranked
WHERE rn = 1;
