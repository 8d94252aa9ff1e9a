-- Incremental: the target is keyed on the click id, and each run inserts the batch's clicks
-- (one row per id) that the target does not hold yet. The only stored rows it reads are
-- those whose ids the batch carries. One write: a retried batch landed or did not.
CREATE TABLE IF NOT EXISTS ad_clicks (
    click_id    VARCHAR PRIMARY KEY,
    campaign_id INTEGER,
    creative_id INTEGER,
    placement   VARCHAR,
    cost        DECIMAL(12,6),
    is_bot      BOOLEAN,
    clicked_at  TIMESTAMP,
    click_date  DATE
);

-- The batch's ids, never empty (an empty batch looks up id ''): DuckDB pushes the ids of the
-- lookup's batch side into the scan of the stored table, but from an empty side it pushes
-- nothing and would read the table whole.
CREATE OR REPLACE TEMP TABLE batch_ids AS
SELECT click_id FROM incoming.clicks UNION ALL SELECT coalesce(min(click_id), '') FROM incoming.clicks;

CREATE OR REPLACE TEMP TABLE known AS
SELECT s.click_id FROM ad_clicks AS s WHERE s.click_id IN (SELECT click_id FROM batch_ids);

INSERT INTO ad_clicks
SELECT
    click_id,
    campaign_id,
    creative_id,
    lower(trim(placement)),
    CAST(cpc_micros AS DECIMAL(18,6)) / 1000000,
    COALESCE(regexp_matches(user_agent, '(?i)bot|crawler|spider'), false),
    clicked_at,
    CAST(clicked_at AS DATE)
FROM incoming.clicks
WHERE click_id NOT IN (SELECT click_id FROM known)
QUALIFY row_number() OVER (PARTITION BY click_id ORDER BY clicked_at) = 1;
