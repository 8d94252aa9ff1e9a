-- Delete and reinsert: every click id of the batch is removed from the table and inserted
-- again from the batch, once. A click delivered again simply replaces itself.
CREATE TABLE IF NOT EXISTS ad_clicks (
    click_id    TEXT,
    campaign_id INTEGER,
    creative_id INTEGER,
    placement   TEXT,
    cost        DECIMAL(12,6),
    is_bot      BOOLEAN,
    clicked_at  TIMESTAMP,
    click_date  DATE
);

DELETE FROM ad_clicks
WHERE click_id IN (SELECT click_id FROM incoming.clicks);

INSERT INTO ad_clicks
SELECT
    click_id,
    campaign_id,
    creative_id,
    lower(trim(placement)),
    CAST(cpc_micros AS DECIMAL(18,6)) / 1000000,
    COALESCE(user_agent ~* 'bot|crawler|spider', false),
    clicked_at,
    CAST(clicked_at AS DATE)
FROM (SELECT *, row_number() OVER (PARTITION BY click_id ORDER BY clicked_at) AS rn
      FROM incoming.clicks) AS c
WHERE rn = 1;
