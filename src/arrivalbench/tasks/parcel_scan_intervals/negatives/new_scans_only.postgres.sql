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
FROM (
    SELECT *, row_number() OVER (PARTITION BY scan_id ORDER BY scanned_at) AS rn
    FROM incoming.parcel_scans
) AS s
WHERE rn = 1
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
        CAST(EXTRACT(EPOCH FROM scanned_at - lag(scanned_at) OVER w) AS BIGINT) / 60
            AS minutes_since_prev
    FROM scan_history
    WINDOW w AS (PARTITION BY parcel_id ORDER BY scanned_at, scan_id)
) AS h
WHERE h.scan_id NOT IN (SELECT scan_id FROM parcel_scan_legs);
