SELECT
    device_id,
    reported_at AS last_seen_at,
    battery_pct,
    signal_dbm,
    count(*) OVER (PARTITION BY device_id) AS heartbeats
FROM device_heartbeats
QUALIFY row_number() OVER (PARTITION BY device_id ORDER BY reported_at DESC, heartbeat_id DESC) = 1
