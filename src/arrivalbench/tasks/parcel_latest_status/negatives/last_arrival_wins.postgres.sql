-- Apply updates once each, in the order they reach us: an update id seen before is skipped;
-- the newest update of a parcel in the batch replaces the stored status.
CREATE TABLE IF NOT EXISTS seen_updates (update_id BIGINT PRIMARY KEY);

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
    SELECT *, row_number() OVER (PARTITION BY parcel_id
                                 ORDER BY updated_at DESC NULLS LAST,
                                          status_seq DESC NULLS LAST) AS rn
    FROM incoming.parcel_status_updates
    WHERE update_id NOT IN (SELECT update_id FROM seen_updates)
) AS u
WHERE rn = 1
ON CONFLICT (parcel_id) DO UPDATE SET
    status     = EXCLUDED.status,
    location   = EXCLUDED.location,
    eta        = EXCLUDED.eta,
    status_seq = EXCLUDED.status_seq,
    updated_at = EXCLUDED.updated_at;

INSERT INTO seen_updates
SELECT DISTINCT update_id FROM incoming.parcel_status_updates
ON CONFLICT DO NOTHING;
