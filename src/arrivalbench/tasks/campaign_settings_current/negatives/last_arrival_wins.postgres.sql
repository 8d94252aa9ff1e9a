-- Apply each message once as it arrives: message ids applied before are skipped; the latest
-- save of a campaign in the batch overwrites its settings; archiving removes the campaign.
CREATE TABLE IF NOT EXISTS applied_changes (change_id BIGINT PRIMARY KEY);

CREATE TABLE IF NOT EXISTS campaign_settings (
    campaign_id  INTEGER PRIMARY KEY,
    name         TEXT,
    status       TEXT,
    daily_budget DECIMAL(10,2),
    bid_strategy TEXT,
    end_date     DATE,
    version      INTEGER
);

CREATE TEMP TABLE latest AS
SELECT campaign_id, name, status, daily_budget, bid_strategy, end_date, version
FROM (SELECT *, row_number() OVER (PARTITION BY campaign_id
                                   ORDER BY changed_at DESC NULLS LAST,
                                            version DESC NULLS LAST) AS rn
      FROM incoming.campaign_changes
      WHERE change_id NOT IN (SELECT change_id FROM applied_changes)) AS ranked
WHERE rn = 1;

DELETE FROM campaign_settings
WHERE campaign_id IN (SELECT campaign_id FROM latest WHERE status = 'archived');

INSERT INTO campaign_settings
SELECT * FROM latest WHERE status <> 'archived'
ON CONFLICT (campaign_id) DO UPDATE SET
    name = EXCLUDED.name, status = EXCLUDED.status, daily_budget = EXCLUDED.daily_budget,
    bid_strategy = EXCLUDED.bid_strategy, end_date = EXCLUDED.end_date,
    version = EXCLUDED.version;

INSERT INTO applied_changes
SELECT DISTINCT change_id FROM incoming.campaign_changes
ON CONFLICT DO NOTHING;
