-- Keep every delivered scan in scan_history; for every parcel the batch touches, delete its
-- rows and insert them again from the history.
CREATE TABLE IF NOT EXISTS scan_history (
    scan_id    BIGINT,
    parcel_id  VARCHAR,
    facility   VARCHAR,
    scan_type  VARCHAR,
    scanned_at TIMESTAMP
);

CREATE TABLE IF NOT EXISTS parcel_scan_legs (
    scan_id            BIGINT,
    parcel_id          VARCHAR,
    facility           VARCHAR,
    scan_type          VARCHAR,
    scanned_at         TIMESTAMP,
    prev_facility      VARCHAR,
    minutes_since_prev BIGINT
);

INSERT INTO scan_history
SELECT scan_id, parcel_id, facility, scan_type, scanned_at
FROM incoming.parcel_scans;

DELETE FROM parcel_scan_legs
WHERE parcel_id IN (SELECT parcel_id FROM incoming.parcel_scans);

INSERT INTO parcel_scan_legs
SELECT
    scan_id,
    parcel_id,
    facility,
    scan_type,
    scanned_at,
    lag(facility) OVER w,
    CAST(EXTRACT(EPOCH FROM scanned_at - lag(scanned_at) OVER w) AS BIGINT) / 60
FROM scan_history
WHERE parcel_id IN (SELECT parcel_id FROM incoming.parcel_scans)
WINDOW w AS (PARTITION BY parcel_id ORDER BY scanned_at, scan_id);
