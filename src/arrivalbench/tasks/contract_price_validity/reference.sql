-- A version counts unless a deletion refers to it; of the counting versions of a contract with
-- the same valid_from, the one recorded last (then the highest id) is in effect, and each
-- version in effect ends where the contract's next one begins.
SELECT version_id, contract_id, price, valid_from,
       lead(valid_from) OVER (PARTITION BY contract_id ORDER BY valid_from) AS valid_to
FROM (
    SELECT v.*, row_number() OVER (PARTITION BY v.contract_id, v.valid_from
                                   ORDER BY v.recorded_at DESC, v.version_id DESC) AS rank
    FROM price_versions AS v
    WHERE NOT EXISTS (SELECT 1 FROM version_deletions AS d WHERE d.version_id = v.version_id)
) AS ranked
WHERE rank = 1
