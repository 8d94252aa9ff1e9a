-- Keep the impressions once per id; when a click comes in for the first time, attribute it to
-- the last impression on record for its user and add it to the table.
CREATE TABLE IF NOT EXISTS impression_history (
    impression_id TEXT PRIMARY KEY,
    campaign_id   INTEGER,
    user_id       TEXT,
    served_at     TIMESTAMP
);

CREATE TABLE IF NOT EXISTS attributed_clicks (
    click_id      TEXT PRIMARY KEY,
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
    FROM (SELECT DISTINCT ON (click_id) click_id, user_id, clicked_at
          FROM incoming.clicks
          WHERE click_id NOT IN (SELECT click_id FROM attributed_clicks)
          ORDER BY click_id) AS c
    LEFT JOIN impression_history AS i
      ON i.user_id = c.user_id
     AND i.served_at <= c.clicked_at
     AND i.served_at >= c.clicked_at - INTERVAL '24 hours'
) AS ranked
WHERE rn = 1;
