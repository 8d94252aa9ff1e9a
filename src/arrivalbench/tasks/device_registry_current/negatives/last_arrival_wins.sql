-- Apply events once, in the order they reach us: event ids applied before are skipped; the
-- latest event of a device in the batch decides its row.
CREATE TABLE IF NOT EXISTS applied_events (event_id BIGINT PRIMARY KEY);

CREATE TABLE IF NOT EXISTS device_registry (
    device_id  VARCHAR PRIMARY KEY,
    site       VARCHAR,
    model      VARCHAR,
    firmware   VARCHAR,
    version    INTEGER,
    updated_at TIMESTAMP
);

CREATE TEMP TABLE latest AS
SELECT device_id, op, site, model, firmware, version, updated_at
FROM incoming.device_events
WHERE event_id NOT IN (SELECT event_id FROM applied_events)
QUALIFY row_number() OVER (PARTITION BY device_id ORDER BY updated_at DESC, version DESC) = 1;

DELETE FROM device_registry
WHERE device_id IN (SELECT device_id FROM latest WHERE op = 'decommission');

INSERT INTO device_registry
SELECT device_id, site, model, firmware, version, updated_at
FROM latest
WHERE op <> 'decommission'
ON CONFLICT (device_id) DO UPDATE SET
    site = EXCLUDED.site, model = EXCLUDED.model, firmware = EXCLUDED.firmware,
    version = EXCLUDED.version, updated_at = EXCLUDED.updated_at;

INSERT OR IGNORE INTO applied_events
SELECT DISTINCT event_id FROM incoming.device_events;
