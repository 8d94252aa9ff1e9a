-- Incremental: the reading ids stored so far are kept in a registry keyed (indexed) on the id.
-- A run looks up only the ids its batch carries and appends the readings not seen before, one
-- row per id, to the registry and the target together (one transaction, so a retried batch adds
-- nothing twice); it never reads the target.
-- DuckDB reads the whole stored side of a join whose other side ends up empty (a batch of new
-- ids only), so the registry holds one sentinel id (-1) that every lookup also asks for.
BEGIN TRANSACTION;

-- Created with its sentinel row, once (the statement does nothing when the table exists).
CREATE TABLE IF NOT EXISTS reading_ids AS SELECT -1::BIGINT AS reading_id;
CREATE UNIQUE INDEX IF NOT EXISTS reading_ids_id ON reading_ids (reading_id);

CREATE TABLE IF NOT EXISTS sensor_readings (
    reading_id BIGINT PRIMARY KEY,
    sensor_id  VARCHAR,
    metric     VARCHAR,
    value      DOUBLE,
    status     VARCHAR,
    read_at    TIMESTAMP,
    read_hour  TIMESTAMP
);

CREATE OR REPLACE TEMP TABLE known AS
SELECT k.reading_id FROM reading_ids AS k
WHERE k.reading_id IN (SELECT reading_id FROM incoming.readings UNION ALL SELECT -1);

CREATE OR REPLACE TEMP TABLE fresh AS
SELECT reading_id, sensor_id, metric, raw_value, read_at
FROM incoming.readings
WHERE reading_id NOT IN (SELECT reading_id FROM known)
QUALIFY row_number() OVER (PARTITION BY reading_id ORDER BY read_at) = 1;

INSERT INTO reading_ids SELECT reading_id FROM fresh;

INSERT INTO sensor_readings
SELECT
    reading_id,
    sensor_id,
    metric,
    raw_value / 10.0,
    CASE
        WHEN raw_value IS NULL THEN 'missing'
        WHEN metric = 'temp_c' AND raw_value / 10.0 NOT BETWEEN -40 AND 85 THEN 'out_of_range'
        WHEN metric = 'humidity_pct' AND raw_value / 10.0 NOT BETWEEN 0 AND 100 THEN 'out_of_range'
        ELSE 'ok'
    END,
    read_at,
    date_trunc('hour', read_at)
FROM fresh;

DROP TABLE fresh;
DROP TABLE known;

COMMIT;
