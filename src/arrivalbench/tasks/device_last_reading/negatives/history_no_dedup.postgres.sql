-- Keep every heartbeat delivered; the trackers the batch mentions are deleted from the target
-- and inserted again, recomputed from the history.
CREATE TABLE IF NOT EXISTS heartbeat_history (
    heartbeat_id BIGINT,
    device_id    TEXT,
    battery_pct  INTEGER,
    signal_dbm   INTEGER,
    reported_at  TIMESTAMP
);

CREATE TABLE IF NOT EXISTS device_last_seen (
    device_id    TEXT,
    last_seen_at TIMESTAMP,
    battery_pct  INTEGER,
    signal_dbm   INTEGER,
    heartbeats   BIGINT
);

INSERT INTO heartbeat_history
SELECT heartbeat_id, device_id, battery_pct, signal_dbm, reported_at
FROM incoming.device_heartbeats;

DELETE FROM device_last_seen
WHERE device_id IN (SELECT device_id FROM incoming.device_heartbeats);

INSERT INTO device_last_seen
SELECT device_id, reported_at, battery_pct, signal_dbm, heartbeats
FROM (
    SELECT
        device_id,
        reported_at,
        battery_pct,
        signal_dbm,
        count(*) OVER (PARTITION BY device_id) AS heartbeats,
        row_number() OVER (PARTITION BY device_id
                           ORDER BY reported_at DESC NULLS LAST, heartbeat_id DESC NULLS LAST) AS rn
    FROM heartbeat_history
    WHERE device_id IN (SELECT device_id FROM incoming.device_heartbeats)
) AS ranked
WHERE rn = 1;
