-- Keep every scan once in scan_history, and add a row to the target for each scan the target
-- does not have yet, with the previous scan as the history knows it. Rows already in the
-- target are final.
CREATE TABLE IF NOT EXISTS scan_history (
    scan_id    BIGINT PRIMARY KEY,
    parcel_id  VARCHAR,
    facility   VARCHAR,
    scan_type  VARCHAR,
    scanned_at TIMESTAMP
);

CREATE TABLE IF NOT EXISTS parcel_scan_legs (
    scan_id            BIGINT PRIMARY KEY,
    parcel_id          VARCHAR,
    facility           VARCHAR,
    scan_type          VARCHAR,
    scanned_at         TIMESTAMP,
    prev_facility      VARCHAR,
    minutes_since_prev BIGINT
);

INSERT INTO scan_history
SELECT scan_id, parcel_id, facility, scan_type, scanned_at
FROM incoming.parcel_scans
QUALIFY row_number() OVER (PARTITION BY scan_id ORDER BY scanned_at) = 1
ON CONFLICT DO NOTHING;

INSERT INTO parcel_scan_legs
SELECT *
FROM (
    SELECT
        scan_id,
        parcel_id,
        facility,
        scan_type,
        scanned_at,
        lag(facility) OVER w AS prev_facility,
        date_diff('second', lag(scanned_at) OVER w, scanned_at) // 60 AS minutes_since_prev
    FROM scan_history
    WINDOW w AS (PARTITION BY parcel_id ORDER BY scanned_at, scan_id)
) AS h
WHERE h.scan_id NOT IN (SELECT scan_id FROM parcel_scan_legs);
