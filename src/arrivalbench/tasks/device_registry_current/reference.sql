SELECT device_id, site, model, firmware, version, updated_at
FROM device_events
QUALIFY row_number() OVER (PARTITION BY device_id ORDER BY version DESC) = 1
    AND op <> 'decommission'
