-- Keep the impressions once per id and every click delivered; attribute all clicks again from
-- the histories on every run.
CREATE TABLE IF NOT EXISTS impression_history (
    impression_id TEXT PRIMARY KEY,
    campaign_id   INTEGER,
    user_id       TEXT,
    served_at     TIMESTAMP
);

CREATE TABLE IF NOT EXISTS click_history (
    click_id   TEXT,
    user_id    TEXT,
    clicked_at TIMESTAMP
);

INSERT INTO impression_history
SELECT DISTINCT ON (impression_id) impression_id, campaign_id, user_id, served_at
FROM incoming.impressions
ORDER BY impression_id
ON CONFLICT DO NOTHING;

INSERT INTO click_history
SELECT click_id, user_id, clicked_at
FROM incoming.clicks;

DROP TABLE IF EXISTS attributed_clicks;

CREATE TABLE attributed_clicks AS
SELECT click_id, user_id, clicked_at, impression_id, campaign_id
FROM (
    SELECT
        c.click_id,
        c.user_id,
        c.clicked_at,
        i.impression_id,
        i.campaign_id,
        row_number() OVER (PARTITION BY c.delivery
                           ORDER BY i.served_at DESC NULLS LAST,
                                    i.impression_id DESC NULLS LAST) AS rn
    FROM (SELECT *, row_number() OVER () AS delivery FROM click_history) AS c
    LEFT JOIN impression_history AS i
      ON i.user_id = c.user_id
     AND i.served_at <= c.clicked_at
     AND i.served_at >= c.clicked_at - INTERVAL '24 hours'
) AS ranked
WHERE rn = 1;
