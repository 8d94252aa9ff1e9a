WITH cur AS (
  SELECT *,
         row_number() OVER (PARTITION BY parcel_id ORDER BY status_seq DESC) AS rn
  FROM parcel_status_updates
)
SELECT CAST(parcel_id AS VARCHAR) AS parcel_id,
       CAST(status AS VARCHAR) AS status,
       CAST(location AS VARCHAR) AS location,
       CAST(eta AS DATE) AS eta,
       CAST(status_seq AS INTEGER) AS status_seq,
       CAST(updated_at AS TIMESTAMP) AS updated_at
FROM cur
WHERE rn = 1
ORDER BY parcel_id
