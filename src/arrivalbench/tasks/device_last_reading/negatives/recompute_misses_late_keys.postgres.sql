-- Negative control (incremental tier): a per-key recompute whose key set comes only from the
-- batch's records newer than anything in the target; a tracker touched only by records that
-- arrive late keeps its old count.
CREATE TABLE IF NOT EXISTS heartbeat_history (
    heartbeat_id BIGINT PRIMARY KEY,
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
SELECT DISTINCT heartbeat_id, device_id, battery_pct, signal_dbm, reported_at
FROM incoming.device_heartbeats
ON CONFLICT DO NOTHING;

CREATE TEMP TABLE touched AS
SELECT DISTINCT device_id FROM incoming.device_heartbeats
WHERE reported_at >= (SELECT coalesce(max(last_seen_at), TIMESTAMP '1900-01-01')
                      FROM device_last_seen);

DELETE FROM device_last_seen
WHERE device_id IN (SELECT device_id FROM touched);

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
    WHERE device_id IN (SELECT device_id FROM touched)
) AS ranked
WHERE rn = 1;
