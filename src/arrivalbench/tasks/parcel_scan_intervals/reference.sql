SELECT
    scan_id,
    parcel_id,
    facility,
    scan_type,
    scanned_at,
    lag(facility) OVER w AS prev_facility,
    date_diff('second', lag(scanned_at) OVER w, scanned_at) // 60 AS minutes_since_prev
FROM parcel_scans
WINDOW w AS (PARTITION BY parcel_id ORDER BY scanned_at, scan_id)
