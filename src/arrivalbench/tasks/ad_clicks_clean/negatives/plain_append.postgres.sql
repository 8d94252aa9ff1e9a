-- Append the clicks of each delivery.
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
FROM incoming.clicks;
