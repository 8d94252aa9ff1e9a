-- Keep every scan once in scan_history; then, for every parcel the batch touches, delete the
-- parcel's rows from the target and insert them again, recomputed from the history. The parcels
-- are taken from the batch itself, so that a run that stopped half-way is completed by the
-- next run of the same batch.
CREATE TABLE IF NOT EXISTS scan_history (
    scan_id    BIGINT PRIMARY KEY,
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
FROM (
    SELECT *, row_number() OVER (PARTITION BY scan_id ORDER BY scanned_at) AS rn
    FROM incoming.parcel_scans
) AS s
WHERE rn = 1
ON CONFLICT DO NOTHING;

DELETE FROM parcel_scan_legs
WHERE parcel_id IN (SELECT parcel_id FROM incoming.parcel_scans);

-- EXTRACT(EPOCH FROM b - a) is DuckDB's date_diff('second', a, b) for whole-second times; / on
-- integers truncates as DuckDB's // does.
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
