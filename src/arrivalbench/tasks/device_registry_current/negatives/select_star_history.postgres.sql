-- Keep a raw copy of the lifecycle feed with its own columns, each event id once; rebuild the
-- registry from it.
CREATE TABLE IF NOT EXISTS device_events_raw AS
SELECT * FROM incoming.device_events LIMIT 0;

INSERT INTO device_events_raw
SELECT DISTINCT * FROM incoming.device_events
WHERE event_id NOT IN (SELECT event_id FROM device_events_raw);

DROP TABLE IF EXISTS device_registry;

CREATE TABLE device_registry AS
SELECT device_id, site, model, firmware, version, updated_at
FROM (SELECT *, row_number() OVER (PARTITION BY device_id
                                   ORDER BY version DESC NULLS LAST) AS rn
      FROM device_events_raw) AS ranked
WHERE rn = 1
    AND op <> 'decommission';
