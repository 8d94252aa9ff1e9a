-- Keep every update received; a parcel's status is the update with its highest sequence
-- number.
CREATE TABLE IF NOT EXISTS parcel_update_log (
    update_id  BIGINT,
    parcel_id  VARCHAR,
    status_seq INTEGER,
    status     VARCHAR,
    location   VARCHAR,
    eta        DATE,
    updated_at TIMESTAMP
);

INSERT INTO parcel_update_log
SELECT update_id, parcel_id, status_seq, status, location, eta, updated_at
FROM incoming.parcel_status_updates;

DROP TABLE IF EXISTS parcel_status;

CREATE TABLE parcel_status AS
SELECT l.parcel_id, l.status, l.location, l.eta, l.status_seq, l.updated_at
FROM parcel_update_log AS l
WHERE l.status_seq = (SELECT max(m.status_seq) FROM parcel_update_log AS m
                      WHERE m.parcel_id = l.parcel_id);
