-- Versioned upsert: the batch's highest update per parcel replaces the stored one only when its
-- sequence number is higher (ON CONFLICT ... DO UPDATE ... WHERE).
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
FROM (
    SELECT *, row_number() OVER (PARTITION BY parcel_id ORDER BY status_seq DESC NULLS LAST) AS rn
    FROM incoming.parcel_status_updates
) AS u
WHERE rn = 1
ON CONFLICT (parcel_id) DO UPDATE SET
    status     = EXCLUDED.status,
    location   = EXCLUDED.location,
    eta        = EXCLUDED.eta,
    status_seq = EXCLUDED.status_seq,
    updated_at = EXCLUDED.updated_at
WHERE EXCLUDED.status_seq > p.status_seq;
