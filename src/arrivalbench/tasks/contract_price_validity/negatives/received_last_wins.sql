-- Each stored version remembers the run that loaded it: of the versions of a contract with
-- the same valid_from, the newest in the feed is in effect (within one batch, the one
-- recorded last).
CREATE TABLE IF NOT EXISTS contract_price_validity (
    version_id  BIGINT PRIMARY KEY,
    contract_id VARCHAR,
    price       DECIMAL(12,2),
    valid_from  DATE,
    valid_to    DATE
);

CREATE TABLE IF NOT EXISTS price_history (
    version_id  BIGINT PRIMARY KEY,
    contract_id VARCHAR,
    price       DECIMAL(12,2),
    valid_from  DATE,
    recorded_at TIMESTAMP,
    loaded_in   BIGINT
);

CREATE TABLE IF NOT EXISTS withdrawn_versions (
    version_id BIGINT PRIMARY KEY
);

-- No key list a lookup joins against is ever empty (an empty one holds a placeholder key):
-- from an empty side DuckDB pushes no keys into the scan of the stored table and reads it whole.
CREATE TEMP TABLE batch_ids AS
SELECT version_id FROM incoming.price_versions
UNION ALL SELECT version_id FROM incoming.version_deletions;

INSERT INTO batch_ids SELECT coalesce(min(version_id), 0) FROM batch_ids;

CREATE TEMP TABLE known_withdrawn AS
SELECT w.version_id FROM withdrawn_versions AS w
WHERE w.version_id IN (SELECT version_id FROM batch_ids);

CREATE TEMP TABLE new_withdrawn AS
SELECT DISTINCT version_id FROM incoming.version_deletions
WHERE version_id NOT IN (SELECT version_id FROM known_withdrawn);

CREATE TEMP TABLE stored AS
SELECT h.version_id, h.contract_id FROM price_history AS h
WHERE h.version_id IN (SELECT version_id FROM batch_ids);

CREATE TEMP TABLE removed AS
SELECT * FROM stored WHERE version_id IN (SELECT version_id FROM new_withdrawn);

CREATE TEMP TABLE fresh AS
SELECT DISTINCT ON (version_id) version_id, contract_id, price, valid_from, recorded_at,
       (SELECT coalesce(max(loaded_in), 0) + 1 FROM price_history) AS loaded_in
FROM incoming.price_versions
WHERE version_id NOT IN (SELECT version_id FROM stored)
  AND version_id NOT IN (SELECT version_id FROM known_withdrawn)
  AND version_id NOT IN (SELECT version_id FROM new_withdrawn)
ORDER BY version_id;

CREATE TEMP TABLE changed AS
SELECT contract_id FROM fresh UNION SELECT contract_id FROM removed;

INSERT INTO changed SELECT coalesce(min(contract_id), '') FROM changed;

CREATE TEMP TABLE versions AS
SELECT h.version_id, h.contract_id, h.price, h.valid_from, h.recorded_at, h.loaded_in
FROM price_history AS h
WHERE h.contract_id IN (SELECT contract_id FROM changed)
  AND h.version_id NOT IN (SELECT version_id FROM removed)
UNION ALL
SELECT * FROM fresh;

CREATE TEMP TABLE rebuilt AS
SELECT version_id, contract_id, price, valid_from,
       lead(valid_from) OVER (PARTITION BY contract_id ORDER BY valid_from) AS valid_to
FROM (
    SELECT *, row_number() OVER (PARTITION BY contract_id, valid_from
                                 ORDER BY loaded_in DESC, recorded_at DESC, version_id DESC) AS rank
    FROM versions
) AS ranked
WHERE rank = 1;

BEGIN TRANSACTION;

DELETE FROM contract_price_validity WHERE contract_id IN (SELECT contract_id FROM changed);

INSERT INTO contract_price_validity SELECT * FROM rebuilt;

DELETE FROM price_history
WHERE version_id IN (SELECT version_id FROM batch_ids)
  AND version_id IN (SELECT version_id FROM removed);

INSERT INTO price_history SELECT * FROM fresh;

INSERT INTO withdrawn_versions SELECT version_id FROM new_withdrawn;

COMMIT;
