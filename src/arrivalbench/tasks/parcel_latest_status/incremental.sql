-- Incremental: the target is the state itself, keyed on the parcel id. Each run offers the
-- batch's highest update per parcel, and the primary key's conflict check reads only the stored
-- rows of the parcels the batch mentions; the stored row is replaced only by a higher sequence
-- number, so duplicates, retries and late updates change nothing they should not.
CREATE TABLE IF NOT EXISTS parcel_status (
    parcel_id  VARCHAR PRIMARY KEY,
    status     VARCHAR,
    location   VARCHAR,
    eta        DATE,
    status_seq INTEGER,
    updated_at TIMESTAMP
);

INSERT INTO parcel_status AS p (parcel_id, status, location, eta, status_seq, updated_at)
SELECT parcel_id, status, location, eta, status_seq, updated_at
FROM incoming.parcel_status_updates
QUALIFY row_number() OVER (PARTITION BY parcel_id ORDER BY status_seq DESC) = 1
ON CONFLICT (parcel_id) DO UPDATE SET
    status     = EXCLUDED.status,
    location   = EXCLUDED.location,
    eta        = EXCLUDED.eta,
    status_seq = EXCLUDED.status_seq,
    updated_at = EXCLUDED.updated_at
WHERE EXCLUDED.status_seq > p.status_seq;
