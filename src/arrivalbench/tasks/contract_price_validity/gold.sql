-- Every delivered version and deletion goes to a landing table as it comes; the table is then
-- rebuilt from the landing tables, one record per id: a version counts unless a deletion
-- refers to it, the one recorded last wins a valid_from date, and each ends at the next one.
CREATE TABLE IF NOT EXISTS versions_landing (
    version_id  BIGINT,
    contract_id VARCHAR,
    price       DECIMAL(12,2),
    valid_from  DATE,
    recorded_at TIMESTAMP
);

CREATE TABLE IF NOT EXISTS deletions_landing (
    deletion_id BIGINT,
    version_id  BIGINT,
    deleted_at  TIMESTAMP
);

INSERT INTO versions_landing
SELECT version_id, contract_id, price, valid_from, recorded_at FROM incoming.price_versions;

INSERT INTO deletions_landing
SELECT deletion_id, version_id, deleted_at FROM incoming.version_deletions;

DROP TABLE IF EXISTS contract_price_validity;

CREATE TABLE contract_price_validity AS
SELECT version_id, contract_id, price, valid_from,
       lead(valid_from) OVER (PARTITION BY contract_id ORDER BY valid_from) AS valid_to
FROM (
    SELECT v.*, row_number() OVER (PARTITION BY v.contract_id, v.valid_from
                                   ORDER BY v.recorded_at DESC, v.version_id DESC) AS rank
    FROM (SELECT DISTINCT ON (version_id) * FROM versions_landing ORDER BY version_id) AS v
    WHERE NOT EXISTS (SELECT 1 FROM deletions_landing AS d WHERE d.version_id = v.version_id)
) AS ranked
WHERE rank = 1;
