-- Keep every message received; a campaign's settings are the message with its highest
-- version, unless that one archives it.
CREATE TABLE IF NOT EXISTS campaign_change_log (
    change_id    BIGINT,
    campaign_id  INTEGER,
    version      INTEGER,
    name         TEXT,
    status       TEXT,
    daily_budget DECIMAL(10,2),
    bid_strategy TEXT,
    end_date     DATE,
    changed_at   TIMESTAMP
);

INSERT INTO campaign_change_log
SELECT change_id, campaign_id, version, name, status, daily_budget, bid_strategy, end_date,
       changed_at
FROM incoming.campaign_changes;

DROP TABLE IF EXISTS campaign_settings;

CREATE TABLE campaign_settings AS
SELECT l.campaign_id, l.name, l.status, l.daily_budget, l.bid_strategy, l.end_date, l.version
FROM campaign_change_log AS l
JOIN (SELECT campaign_id, max(version) AS version FROM campaign_change_log
      GROUP BY campaign_id) AS m USING (campaign_id, version)
WHERE l.status <> 'archived';
