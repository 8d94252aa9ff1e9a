WITH ranked AS (
  SELECT
    device_id, reported_at, battery_pct, signal_dbm,
    ROW_NUMBER() OVER (PARTITION BY device_id ORDER BY reported_at DESC NULLS LAST, heartbeat_id DESC) AS rn,
    COUNT(*) OVER (PARTITION BY device_id) AS heartbeats
  FROM device_heartbeats
)
SELECT
  CAST(device_id AS VARCHAR) AS device_id,
  CAST(reported_at AS TIMESTAMP) AS last_seen_at,
  CAST(battery_pct AS INTEGER) AS battery_pct,
  CAST(signal_dbm AS INTEGER) AS signal_dbm,
  CAST(heartbeats AS BIGINT) AS heartbeats
FROM ranked
WHERE rn = 1
ORDER BY device_id
