-- Incremental: the scan history is keyed on the scan id and indexed on the parcel, and
-- parcel_last keeps each parcel's latest scan. A run looks up only the stored ids its batch
-- carries and stores the scans not seen before. A parcel whose new scans all come after its
-- latest one needs nothing but that latest scan; only a parcel with a late scan is recomputed
-- from its history (index scan), and then the leg of the scan following each late one is
-- replaced too. One transaction, so a retried batch changes nothing twice.
-- DuckDB reads the whole stored side of a join whose other side ends up empty, so the history
-- and parcel_last each hold one sentinel row that every lookup also asks for, and rows of the
-- target are deleted only when they are known to be stored.
BEGIN TRANSACTION;

-- Created with their sentinel row, once (the statement does nothing when the table exists).
CREATE TABLE IF NOT EXISTS scan_history AS
SELECT -1::BIGINT AS scan_id, NULL::VARCHAR AS parcel_id, NULL::VARCHAR AS facility,
       NULL::VARCHAR AS scan_type, NULL::TIMESTAMP AS scanned_at;
CREATE UNIQUE INDEX IF NOT EXISTS scan_history_id ON scan_history (scan_id);
CREATE INDEX IF NOT EXISTS scan_history_parcel ON scan_history (parcel_id);

CREATE TABLE IF NOT EXISTS parcel_last AS
SELECT ''::VARCHAR AS parcel_id, NULL::BIGINT AS scan_id, NULL::VARCHAR AS facility,
       NULL::TIMESTAMP AS scanned_at;
CREATE UNIQUE INDEX IF NOT EXISTS parcel_last_id ON parcel_last (parcel_id);

CREATE TABLE IF NOT EXISTS parcel_scan_legs (
    scan_id            BIGINT PRIMARY KEY,
    parcel_id          VARCHAR,
    facility           VARCHAR,
    scan_type          VARCHAR,
    scanned_at         TIMESTAMP,
    prev_facility      VARCHAR,
    minutes_since_prev BIGINT
);

CREATE OR REPLACE TEMP TABLE known AS
SELECT h.scan_id FROM scan_history AS h
WHERE h.scan_id IN (SELECT scan_id FROM incoming.parcel_scans UNION ALL SELECT -1);

CREATE OR REPLACE TEMP TABLE fresh AS
SELECT scan_id, parcel_id, facility, scan_type, scanned_at
FROM incoming.parcel_scans
WHERE scan_id NOT IN (SELECT scan_id FROM known)
QUALIFY row_number() OVER (PARTITION BY scan_id ORDER BY scanned_at) = 1;

INSERT INTO scan_history SELECT * FROM fresh;

CREATE OR REPLACE TEMP TABLE last AS
SELECT l.* FROM parcel_last AS l
WHERE l.parcel_id IN (SELECT parcel_id FROM fresh UNION ALL SELECT '');
DELETE FROM last WHERE parcel_id = '';

-- Parcels with a new scan before their latest stored one.
CREATE OR REPLACE TEMP TABLE late AS
SELECT DISTINCT f.parcel_id FROM fresh AS f JOIN last AS l USING (parcel_id)
WHERE (f.scanned_at, f.scan_id) < (l.scanned_at, l.scan_id);

CREATE OR REPLACE TEMP TABLE late_history AS
SELECT h.* FROM scan_history AS h
WHERE h.parcel_id IN (SELECT parcel_id FROM late UNION ALL SELECT '');

CREATE OR REPLACE TEMP TABLE legs AS
WITH base AS (
    -- a late parcel: its whole history; any other: its latest stored scan and the new ones
    SELECT scan_id, parcel_id, facility, scan_type, scanned_at, false AS stored_only
    FROM fresh WHERE parcel_id NOT IN (SELECT parcel_id FROM late)
    UNION ALL
    SELECT scan_id, parcel_id, facility, NULL, scanned_at, true
    FROM last WHERE parcel_id NOT IN (SELECT parcel_id FROM late)
    UNION ALL
    SELECT scan_id, parcel_id, facility, scan_type, scanned_at, false FROM late_history
), computed AS (
    SELECT
        *,
        lag(facility) OVER w AS prev_facility,
        date_diff('second', lag(scanned_at) OVER w, scanned_at) // 60 AS minutes_since_prev,
        scan_id IN (SELECT scan_id FROM fresh) AS is_fresh,
        coalesce(lag(scan_id IN (SELECT scan_id FROM fresh)) OVER w, false) AS after_fresh
    FROM base
    WINDOW w AS (PARTITION BY parcel_id ORDER BY scanned_at, scan_id)
)
SELECT * FROM computed WHERE NOT stored_only AND (is_fresh OR after_fresh);

CREATE OR REPLACE TEMP TABLE replaced AS
SELECT scan_id FROM legs WHERE NOT is_fresh;

DELETE FROM parcel_scan_legs
WHERE scan_id IN (SELECT scan_id FROM replaced UNION ALL SELECT -1);

INSERT INTO parcel_scan_legs
SELECT scan_id, parcel_id, facility, scan_type, scanned_at, prev_facility, minutes_since_prev
FROM legs;

CREATE OR REPLACE TEMP TABLE new_last AS
SELECT parcel_id, arg_max_null(scan_id, (scanned_at, scan_id)) AS scan_id,
       arg_max_null(facility, (scanned_at, scan_id)) AS facility, max(scanned_at) AS scanned_at
FROM (SELECT parcel_id, scan_id, facility, scanned_at FROM fresh
      UNION ALL SELECT parcel_id, scan_id, facility, scanned_at FROM last)
GROUP BY parcel_id;

-- The sentinel goes with the stored rows (never an empty lookup) and comes back.
DELETE FROM parcel_last WHERE parcel_id IN (SELECT parcel_id FROM last UNION ALL SELECT '');

INSERT INTO parcel_last
SELECT * FROM new_last UNION ALL SELECT '', NULL, NULL, NULL;

DROP TABLE new_last;
DROP TABLE replaced;
DROP TABLE legs;
DROP TABLE late_history;
DROP TABLE late;
DROP TABLE last;
DROP TABLE fresh;
DROP TABLE known;

COMMIT;
