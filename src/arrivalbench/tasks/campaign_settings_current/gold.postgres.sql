-- One transaction per batch: the state table takes each campaign's newest version (a MERGE
-- that only moves versions forward) and the settings table is rebuilt from the state; both
-- commit together.
BEGIN TRANSACTION;

CREATE TABLE IF NOT EXISTS campaign_state (
    campaign_id  INTEGER PRIMARY KEY,
    version      INTEGER,
    name         TEXT,
    status       TEXT,
    daily_budget DECIMAL(10,2),
    bid_strategy TEXT,
    end_date     DATE
);

MERGE INTO campaign_state AS s
USING (
    SELECT campaign_id, version, name, status, daily_budget, bid_strategy, end_date
    FROM (SELECT *, row_number() OVER (PARTITION BY campaign_id
                                       ORDER BY version DESC NULLS LAST) AS rn
          FROM incoming.campaign_changes) AS ranked
    WHERE rn = 1
) AS c
ON s.campaign_id = c.campaign_id
WHEN MATCHED AND c.version > s.version THEN UPDATE SET
    version = c.version, name = c.name, status = c.status, daily_budget = c.daily_budget,
    bid_strategy = c.bid_strategy, end_date = c.end_date
WHEN NOT MATCHED THEN INSERT VALUES
    (c.campaign_id, c.version, c.name, c.status, c.daily_budget, c.bid_strategy, c.end_date);

DROP TABLE IF EXISTS campaign_settings;

CREATE TABLE campaign_settings AS
SELECT campaign_id, name, status, daily_budget, bid_strategy, end_date, version
FROM campaign_state
WHERE status <> 'archived';

COMMIT;
