WITH
-- each price version once (the same version_id may be delivered several times)
versions AS (
    SELECT DISTINCT ON (version_id) version_id, contract_id, price, valid_from, recorded_at
    FROM price_versions
    ORDER BY version_id
),
-- a version referred to by any deletion (any number of times, received at any point) is withdrawn
live_versions AS (
    SELECT v.*
    FROM versions v
    WHERE NOT EXISTS (SELECT 1 FROM version_deletions d WHERE d.version_id = v.version_id)
),
-- per (contract, valid_from) only the last recorded live version is in effect;
-- ties on recorded_at go to the highest version_id
in_effect AS (
    SELECT *
    FROM live_versions
    QUALIFY row_number() OVER (
        PARTITION BY contract_id, valid_from
        ORDER BY recorded_at DESC, version_id DESC
    ) = 1
)
SELECT
    CAST(version_id AS BIGINT)        AS version_id,
    CAST(contract_id AS VARCHAR)      AS contract_id,
    CAST(price AS DECIMAL(12,2))      AS price,
    CAST(valid_from AS DATE)          AS valid_from,
    -- next in-effect valid_from of the same contract (valid_from is unique per contract here)
    CAST(lead(valid_from) OVER (PARTITION BY contract_id ORDER BY valid_from) AS DATE) AS valid_to
FROM in_effect
