-- Incremental: device_state keeps each device's highest version seen so far (decommissioned devices
-- included, so that an older message can never bring one back). A run reads the stored state of
-- the devices its batch mentions; only the devices whose version moves forward are rewritten,
-- in the state and in the target, in one transaction (a retried batch finds the versions
-- already applied and changes nothing). A repeated message carries a version already seen.
CREATE TABLE IF NOT EXISTS device_state (
    device_id    VARCHAR PRIMARY KEY,
    version      INTEGER,
    op           VARCHAR,
    site         VARCHAR,
    model        VARCHAR,
    firmware     VARCHAR,
    updated_at   TIMESTAMP
);

CREATE TABLE IF NOT EXISTS device_registry (
    device_id    VARCHAR PRIMARY KEY,
    site         VARCHAR,
    model        VARCHAR,
    firmware     VARCHAR,
    version      INTEGER,
    updated_at   TIMESTAMP
);

CREATE OR REPLACE TEMP TABLE newest AS
SELECT device_id, version, op, site, model, firmware, updated_at
FROM incoming.device_events
QUALIFY row_number() OVER (PARTITION BY device_id ORDER BY version DESC) = 1;

-- The key lists the lookups below join against are never empty (an empty one looks up ''):
-- DuckDB pushes the keys of a join's small side into the scan of the stored table, but from an
-- empty side it pushes nothing and reads the table whole. The deletes also require the key to
-- be a winner's, so that a real key '' is never deleted by mistake.
CREATE OR REPLACE TEMP TABLE batch_keys AS
SELECT device_id FROM newest UNION ALL SELECT coalesce(min(device_id), '') FROM newest;

CREATE OR REPLACE TEMP TABLE stored AS
SELECT s.device_id, s.version FROM device_state AS s WHERE s.device_id IN (SELECT device_id FROM batch_keys);

CREATE OR REPLACE TEMP TABLE winners AS
SELECT n.* FROM newest AS n LEFT JOIN stored AS s USING (device_id)
WHERE s.version IS NULL OR n.version > s.version;

CREATE OR REPLACE TEMP TABLE winner_keys AS
SELECT device_id FROM winners UNION ALL SELECT coalesce(min(device_id), '') FROM winners;

BEGIN TRANSACTION;

DELETE FROM device_state
WHERE device_id IN (SELECT device_id FROM winner_keys) AND device_id IN (SELECT device_id FROM winners);

INSERT INTO device_state SELECT device_id, version, op, site, model, firmware, updated_at FROM winners;

DELETE FROM device_registry
WHERE device_id IN (SELECT device_id FROM winner_keys) AND device_id IN (SELECT device_id FROM winners);

INSERT INTO device_registry
SELECT device_id, site, model, firmware, version, updated_at
FROM winners
WHERE op <> 'decommission';

COMMIT;
