-- Keep every event received; a device's row is its event with the highest version, unless
-- that event takes it out of service.
CREATE TABLE IF NOT EXISTS device_event_log (
    event_id   BIGINT,
    device_id  TEXT,
    version    INTEGER,
    op         TEXT,
    site       TEXT,
    model      TEXT,
    firmware   TEXT,
    updated_at TIMESTAMP
);

INSERT INTO device_event_log
SELECT event_id, device_id, version, op, site, model, firmware, updated_at
FROM incoming.device_events;

DROP TABLE IF EXISTS device_registry;

CREATE TABLE device_registry AS
SELECT l.device_id, l.site, l.model, l.firmware, l.version, l.updated_at
FROM device_event_log AS l
JOIN (SELECT device_id, max(version) AS version FROM device_event_log GROUP BY device_id) AS m
  USING (device_id, version)
WHERE l.op <> 'decommission';
