-- Incremental: campaign_state keeps each campaign's highest version seen so far (archived campaigns
-- included, so that an older message can never bring one back). A run reads the stored state of
-- the campaigns its batch mentions; only the campaigns whose version moves forward are rewritten,
-- in the state and in the target, in one transaction (a retried batch finds the versions
-- already applied and changes nothing). A repeated message carries a version already seen.
CREATE TABLE IF NOT EXISTS campaign_state (
    campaign_id  INTEGER PRIMARY KEY,
    version      INTEGER,
    name         VARCHAR,
    status       VARCHAR,
    daily_budget DECIMAL(10,2),
    bid_strategy VARCHAR,
    end_date     DATE
);

CREATE TABLE IF NOT EXISTS campaign_settings (
    campaign_id  INTEGER PRIMARY KEY,
    name         VARCHAR,
    status       VARCHAR,
    daily_budget DECIMAL(10,2),
    bid_strategy VARCHAR,
    end_date     DATE,
    version      INTEGER
);

CREATE OR REPLACE TEMP TABLE newest AS
SELECT campaign_id, version, name, status, daily_budget, bid_strategy, end_date
FROM incoming.campaign_changes
QUALIFY row_number() OVER (PARTITION BY campaign_id ORDER BY version DESC) = 1;

-- The key lists the lookups below join against are never empty (an empty one looks up 0):
-- DuckDB pushes the keys of a join's small side into the scan of the stored table, but from an
-- empty side it pushes nothing and reads the table whole. The deletes also require the key to
-- be a winner's, so that a real key 0 is never deleted by mistake.
CREATE OR REPLACE TEMP TABLE batch_keys AS
SELECT campaign_id FROM newest UNION ALL SELECT coalesce(min(campaign_id), 0) FROM newest;

CREATE OR REPLACE TEMP TABLE stored AS
SELECT s.campaign_id, s.version FROM campaign_state AS s WHERE s.campaign_id IN (SELECT campaign_id FROM batch_keys);

CREATE OR REPLACE TEMP TABLE winners AS
SELECT n.* FROM newest AS n LEFT JOIN stored AS s USING (campaign_id)
WHERE s.version IS NULL OR n.version > s.version;

CREATE OR REPLACE TEMP TABLE winner_keys AS
SELECT campaign_id FROM winners UNION ALL SELECT coalesce(min(campaign_id), 0) FROM winners;

BEGIN TRANSACTION;

DELETE FROM campaign_state
WHERE campaign_id IN (SELECT campaign_id FROM winner_keys) AND campaign_id IN (SELECT campaign_id FROM winners);

INSERT INTO campaign_state SELECT campaign_id, version, name, status, daily_budget, bid_strategy, end_date FROM winners;

DELETE FROM campaign_settings
WHERE campaign_id IN (SELECT campaign_id FROM winner_keys) AND campaign_id IN (SELECT campaign_id FROM winners);

INSERT INTO campaign_settings
SELECT campaign_id, name, status, daily_budget, bid_strategy, end_date, version
FROM winners
WHERE status <> 'archived';

COMMIT;
