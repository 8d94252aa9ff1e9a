-- Negative control (incremental tier): the delta is taken from the batch as delivered, before
-- its repeated heartbeats are collapsed, so a heartbeat sent twice in one batch counts twice.
CREATE TABLE IF NOT EXISTS heartbeat_history (
    heartbeat_id BIGINT PRIMARY KEY,
    device_id    TEXT,
    battery_pct  INTEGER,
    signal_dbm   INTEGER,
    reported_at  TIMESTAMP
);

CREATE TABLE IF NOT EXISTS device_state (
    device_id         TEXT PRIMARY KEY,
    last_seen_at      TIMESTAMP,
    last_heartbeat_id BIGINT,
    battery_pct       INTEGER,
    signal_dbm        INTEGER,
    heartbeats        BIGINT
);

CREATE TABLE IF NOT EXISTS device_last_seen (
    device_id    TEXT PRIMARY KEY,
    last_seen_at TIMESTAMP,
    battery_pct  INTEGER,
    signal_dbm   INTEGER,
    heartbeats   BIGINT
);

BEGIN;

CREATE TEMP TABLE known AS
SELECT h.heartbeat_id FROM heartbeat_history AS h
WHERE h.heartbeat_id IN (SELECT heartbeat_id FROM incoming.device_heartbeats);

CREATE TEMP TABLE fresh AS
SELECT heartbeat_id, device_id, battery_pct, signal_dbm, reported_at
FROM incoming.device_heartbeats
WHERE heartbeat_id NOT IN (SELECT heartbeat_id FROM known);

INSERT INTO heartbeat_history SELECT * FROM fresh ON CONFLICT DO NOTHING;

INSERT INTO device_state
SELECT device_id, reported_at, heartbeat_id, battery_pct, signal_dbm, heartbeats
FROM (SELECT device_id, reported_at, heartbeat_id, battery_pct, signal_dbm,
             count(*) OVER (PARTITION BY device_id) AS heartbeats,
             row_number() OVER (PARTITION BY device_id ORDER BY reported_at DESC NULLS LAST,
                                                                heartbeat_id DESC NULLS LAST) AS rn
      FROM fresh) AS ranked
WHERE rn = 1
ON CONFLICT (device_id) DO UPDATE SET
    last_seen_at = CASE WHEN (excluded.last_seen_at, excluded.last_heartbeat_id) > (device_state.last_seen_at, device_state.last_heartbeat_id) THEN excluded.last_seen_at ELSE device_state.last_seen_at END,
    last_heartbeat_id = CASE WHEN (excluded.last_seen_at, excluded.last_heartbeat_id) > (device_state.last_seen_at, device_state.last_heartbeat_id) THEN excluded.last_heartbeat_id
                             ELSE device_state.last_heartbeat_id END,
    battery_pct = CASE WHEN (excluded.last_seen_at, excluded.last_heartbeat_id) > (device_state.last_seen_at, device_state.last_heartbeat_id) THEN excluded.battery_pct ELSE device_state.battery_pct END,
    signal_dbm = CASE WHEN (excluded.last_seen_at, excluded.last_heartbeat_id) > (device_state.last_seen_at, device_state.last_heartbeat_id) THEN excluded.signal_dbm ELSE device_state.signal_dbm END,
    heartbeats = device_state.heartbeats + excluded.heartbeats;

INSERT INTO device_last_seen
SELECT s.device_id, s.last_seen_at, s.battery_pct, s.signal_dbm, s.heartbeats
FROM device_state AS s
WHERE s.device_id IN (SELECT device_id FROM fresh)
ON CONFLICT (device_id) DO UPDATE SET
    last_seen_at = excluded.last_seen_at, battery_pct = excluded.battery_pct,
    signal_dbm = excluded.signal_dbm, heartbeats = excluded.heartbeats;

COMMIT;
