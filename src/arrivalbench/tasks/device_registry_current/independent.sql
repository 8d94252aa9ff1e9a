WITH cur AS (
  SELECT *,
         row_number() OVER (PARTITION BY device_id ORDER BY version DESC) AS rn
  FROM device_events
)
SELECT CAST(device_id AS VARCHAR) AS device_id,
       CAST(site AS VARCHAR) AS site,
       CAST(model AS VARCHAR) AS model,
       CAST(firmware AS VARCHAR) AS firmware,
       CAST(version AS INTEGER) AS version,
       CAST(updated_at AS TIMESTAMP) AS updated_at
FROM cur
WHERE rn = 1
  AND op IS DISTINCT FROM 'decommission'
ORDER BY device_id
