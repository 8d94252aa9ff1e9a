-- Keep a raw copy of the carrier's updates with the feed's columns, each update id once, and
-- rebuild the status table from it.
CREATE TABLE IF NOT EXISTS parcel_updates_raw AS
SELECT * FROM incoming.parcel_status_updates LIMIT 0;

INSERT INTO parcel_updates_raw
SELECT DISTINCT * FROM incoming.parcel_status_updates
WHERE update_id NOT IN (SELECT update_id FROM parcel_updates_raw);

DROP TABLE IF EXISTS parcel_status;

CREATE TABLE parcel_status AS
SELECT parcel_id, status, location, eta, status_seq, updated_at
FROM (
    SELECT *, row_number() OVER (PARTITION BY parcel_id ORDER BY status_seq DESC NULLS LAST) AS rn
    FROM parcel_updates_raw
) AS u
WHERE rn = 1;
