-- Keep a raw copy of the campaign feed with its own columns, each message id once; rebuild the
-- settings from it.
CREATE TABLE IF NOT EXISTS campaign_changes_raw AS
SELECT * FROM incoming.campaign_changes LIMIT 0;

INSERT INTO campaign_changes_raw
SELECT DISTINCT * FROM incoming.campaign_changes
WHERE change_id NOT IN (SELECT change_id FROM campaign_changes_raw);

DROP TABLE IF EXISTS campaign_settings;

CREATE TABLE campaign_settings AS
SELECT campaign_id, name, status, daily_budget, bid_strategy, end_date, version
FROM (SELECT *, row_number() OVER (PARTITION BY campaign_id
                                   ORDER BY version DESC NULLS LAST) AS rn
      FROM campaign_changes_raw) AS ranked
WHERE rn = 1
    AND status <> 'archived';
