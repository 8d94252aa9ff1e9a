SELECT parcel_id, status, location, eta, status_seq, updated_at
FROM parcel_status_updates
QUALIFY row_number() OVER (PARTITION BY parcel_id ORDER BY status_seq DESC) = 1
