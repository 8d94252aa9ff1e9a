-- Incremental: the capture ids stored so far are kept in a registry keyed (indexed) on the id.
-- A run looks up only the ids its batch carries and appends the captures not seen before, one
-- row per id, to the registry and the target together (one transaction, so a retried batch adds
-- nothing twice); it never reads the target.
-- DuckDB reads the whole stored side of a join whose other side ends up empty (a batch of new
-- ids only), so the registry holds one sentinel id ('') that every lookup also asks for.
BEGIN TRANSACTION;

-- Created with its sentinel row, once (the statement does nothing when the table exists).
CREATE TABLE IF NOT EXISTS capture_ids AS SELECT ''::VARCHAR AS capture_id;
CREATE UNIQUE INDEX IF NOT EXISTS capture_ids_id ON capture_ids (capture_id);

CREATE TABLE IF NOT EXISTS payment_captures (
    capture_id     VARCHAR PRIMARY KEY,
    payment_intent VARCHAR,
    merchant_id    INTEGER,
    currency       VARCHAR,
    amount         DECIMAL(14,2),
    card_brand     VARCHAR,
    captured_at    TIMESTAMP,
    capture_date   DATE
);

CREATE OR REPLACE TEMP TABLE known AS
SELECT k.capture_id FROM capture_ids AS k
WHERE k.capture_id IN (SELECT capture_id FROM incoming.captures UNION ALL SELECT '');

CREATE OR REPLACE TEMP TABLE fresh AS
SELECT DISTINCT ON (capture_id)
    capture_id, payment_intent, merchant_id, amount_minor, currency, card_brand, captured_at
FROM incoming.captures
WHERE capture_id NOT IN (SELECT capture_id FROM known)
ORDER BY capture_id;

INSERT INTO capture_ids SELECT capture_id FROM fresh;

INSERT INTO payment_captures
SELECT
    capture_id,
    payment_intent,
    merchant_id,
    upper(currency),
    CAST(CASE WHEN upper(currency) IN ('JPY', 'KRW') THEN amount_minor
              ELSE amount_minor / 100 END AS DECIMAL(14,2)),
    card_brand,
    captured_at,
    CAST(captured_at AS DATE)
FROM fresh;

DROP TABLE fresh;
DROP TABLE known;

COMMIT;
