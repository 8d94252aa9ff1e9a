-- Every event is kept once in event_history. The devices the batch mentions are deleted from
-- the registry and inserted again from their highest version in the history, unless that
-- version takes them out of service.
CREATE TABLE IF NOT EXISTS event_history (
    event_id   BIGINT PRIMARY KEY,
    device_id  TEXT,
    version    INTEGER,
    op         TEXT,
    site       TEXT,
    model      TEXT,
    firmware   TEXT,
    updated_at TIMESTAMP
);

CREATE TABLE IF NOT EXISTS device_registry (
    device_id  TEXT,
    site       TEXT,
    model      TEXT,
    firmware   TEXT,
    version    INTEGER,
    updated_at TIMESTAMP
);

INSERT INTO event_history
SELECT DISTINCT event_id, device_id, version, op, site, model, firmware, updated_at
FROM incoming.device_events
ON CONFLICT DO NOTHING;

DELETE FROM device_registry
WHERE device_id IN (SELECT device_id FROM incoming.device_events);

INSERT INTO device_registry
SELECT device_id, site, model, firmware, version, updated_at
FROM (SELECT *, row_number() OVER (PARTITION BY device_id
                                   ORDER BY version DESC NULLS LAST) AS rn
      FROM event_history
      WHERE device_id IN (SELECT device_id FROM incoming.device_events)) AS ranked
WHERE rn = 1
    AND op <> 'decommission';
