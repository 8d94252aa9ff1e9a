-- Apply events once, in the order they reach us: event ids applied before are skipped; the
-- latest event of a device in the batch decides its row.
CREATE TABLE IF NOT EXISTS applied_events (event_id BIGINT PRIMARY KEY);

CREATE TABLE IF NOT EXISTS device_registry (
    device_id  TEXT PRIMARY KEY,
    site       TEXT,
    model      TEXT,
    firmware   TEXT,
    version    INTEGER,
    updated_at TIMESTAMP
);

CREATE TEMP TABLE latest AS
SELECT device_id, op, site, model, firmware, version, updated_at
FROM (SELECT *, row_number() OVER (PARTITION BY device_id
                                   ORDER BY updated_at DESC NULLS LAST,
                                            version DESC NULLS LAST) AS rn
      FROM incoming.device_events
      WHERE event_id NOT IN (SELECT event_id FROM applied_events)) AS ranked
WHERE rn = 1;

DELETE FROM device_registry
WHERE device_id IN (SELECT device_id FROM latest WHERE op = 'decommission');

INSERT INTO device_registry
SELECT device_id, site, model, firmware, version, updated_at
FROM latest
WHERE op <> 'decommission'
ON CONFLICT (device_id) DO UPDATE SET
    site = EXCLUDED.site, model = EXCLUDED.model, firmware = EXCLUDED.firmware,
    version = EXCLUDED.version, updated_at = EXCLUDED.updated_at;

INSERT INTO applied_events
SELECT DISTINCT event_id FROM incoming.device_events
ON CONFLICT DO NOTHING;
