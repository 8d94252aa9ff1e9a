-- Find the batch's scans that scan_history does not hold yet, add them to the history, and
-- rebuild the target rows of the parcels those new scans belong to.
CREATE TABLE IF NOT EXISTS scan_history (
    scan_id    BIGINT PRIMARY KEY,
    parcel_id  VARCHAR,
    facility   VARCHAR,
    scan_type  VARCHAR,
    scanned_at TIMESTAMP
);

CREATE TEMP TABLE new_scans AS
SELECT scan_id, parcel_id, facility, scan_type, scanned_at
FROM (
    SELECT *, row_number() OVER (PARTITION BY scan_id ORDER BY scanned_at) AS rn
    FROM incoming.parcel_scans
    WHERE scan_id NOT IN (SELECT scan_id FROM scan_history)
) AS s
WHERE rn = 1;

INSERT INTO scan_history
SELECT * FROM new_scans;

CREATE TABLE IF NOT EXISTS parcel_scan_legs (
    scan_id            BIGINT,
    parcel_id          VARCHAR,
    facility           VARCHAR,
    scan_type          VARCHAR,
    scanned_at         TIMESTAMP,
    prev_facility      VARCHAR,
    minutes_since_prev BIGINT
);

DELETE FROM parcel_scan_legs
WHERE parcel_id IN (SELECT parcel_id FROM new_scans);

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
WHERE parcel_id IN (SELECT parcel_id FROM new_scans)
WINDOW w AS (PARTITION BY parcel_id ORDER BY scanned_at, scan_id);
