-- One transaction per batch. The heartbeats not counted before are counted; each tracker's
-- newest heartbeat of the batch becomes its last heartbeat.
BEGIN TRANSACTION;

CREATE TABLE IF NOT EXISTS counted_heartbeats (heartbeat_id BIGINT PRIMARY KEY);

CREATE TABLE IF NOT EXISTS device_last_seen (
    device_id    TEXT PRIMARY KEY,
    last_seen_at TIMESTAMP,
    battery_pct  INTEGER,
    signal_dbm   INTEGER,
    heartbeats   BIGINT
);

CREATE TEMP TABLE fresh AS
SELECT DISTINCT heartbeat_id, device_id, battery_pct, signal_dbm, reported_at
FROM incoming.device_heartbeats
WHERE heartbeat_id NOT IN (SELECT heartbeat_id FROM counted_heartbeats);

INSERT INTO device_last_seen AS d
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
    FROM fresh
) AS ranked
WHERE rn = 1
ON CONFLICT (device_id) DO UPDATE SET
    last_seen_at = EXCLUDED.last_seen_at,
    battery_pct  = EXCLUDED.battery_pct,
    signal_dbm   = EXCLUDED.signal_dbm,
    heartbeats   = d.heartbeats + EXCLUDED.heartbeats;

INSERT INTO counted_heartbeats SELECT heartbeat_id FROM fresh;

COMMIT;
