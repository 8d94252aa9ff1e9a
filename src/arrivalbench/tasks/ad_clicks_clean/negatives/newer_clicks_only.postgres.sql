-- Only clicks newer than what the table holds are new: replace the batch's clicks from the
-- newest loaded click time on, and insert them once.
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

CREATE TEMP TABLE fresh AS
SELECT *
FROM incoming.clicks
WHERE clicked_at >= (SELECT COALESCE(MAX(clicked_at), TIMESTAMP '1970-01-01') FROM ad_clicks);

DELETE FROM ad_clicks
WHERE click_id IN (SELECT click_id FROM fresh);

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
      FROM fresh) AS f
WHERE rn = 1;
