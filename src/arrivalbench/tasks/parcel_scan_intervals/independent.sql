WITH s AS (
    SELECT *,
           lag(facility) OVER w AS prev_fac,
           lag(scanned_at) OVER w AS prev_at,
           row_number() OVER w AS rn
    FROM parcel_scans
    WINDOW w AS (PARTITION BY parcel_id ORDER BY scanned_at, scan_id)
)
SELECT
    CAST(scan_id AS BIGINT) AS scan_id,
    CAST(parcel_id AS VARCHAR) AS parcel_id,
    CAST(facility AS VARCHAR) AS facility,
    CAST(scan_type AS VARCHAR) AS scan_type,
    CAST(scanned_at AS TIMESTAMP) AS scanned_at,
    CAST(CASE WHEN rn = 1 THEN NULL ELSE prev_fac END AS VARCHAR) AS prev_facility,
    CAST(CASE WHEN rn = 1 THEN NULL
              ELSE floor((epoch_us(scanned_at) - epoch_us(prev_at)) / 60000000.0) END AS BIGINT) AS minutes_since_prev
FROM s
ORDER BY parcel_id, scanned_at, scan_id
