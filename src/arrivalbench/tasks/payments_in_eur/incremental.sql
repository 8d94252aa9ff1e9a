-- Incremental: rates and payments are kept once per id in histories keyed (indexed) on the id
-- and indexed on the currency, and currency_state keeps per currency its latest rate and the
-- time of its latest payment. A run looks up only the ids its batch carries; a new payment at
-- or after its currency's latest rate is converted from the state alone (one row per currency),
-- and only a currency with a late payment or a late rate (one starting at or before a stored
-- payment) is read from the histories, its stored payments recomputed and replaced by key. One
-- transaction, so a retried batch changes nothing twice.
-- DuckDB reads the whole stored side of a join whose other side ends up empty, so the histories
-- and the state hold one sentinel row each that every lookup also asks for, and target rows
-- are deleted only when they are known to be stored.
BEGIN TRANSACTION;

-- Created with their sentinel rows, once (the statements do nothing when the tables exist).
CREATE TABLE IF NOT EXISTS rate_history AS
SELECT -1::BIGINT AS rate_id, NULL::VARCHAR AS currency, NULL::DECIMAL(12,6) AS rate_to_eur,
       NULL::TIMESTAMP AS effective_at;
CREATE UNIQUE INDEX IF NOT EXISTS rate_history_id ON rate_history (rate_id);
CREATE INDEX IF NOT EXISTS rate_history_currency ON rate_history (currency);

CREATE TABLE IF NOT EXISTS payment_history AS
SELECT ''::VARCHAR AS payment_id, NULL::INTEGER AS merchant_id, NULL::VARCHAR AS currency,
       NULL::DECIMAL(12,2) AS amount, NULL::TIMESTAMP AS paid_at;
CREATE UNIQUE INDEX IF NOT EXISTS payment_history_id ON payment_history (payment_id);
CREATE INDEX IF NOT EXISTS payment_history_currency ON payment_history (currency);

CREATE TABLE IF NOT EXISTS currency_state AS
SELECT ''::VARCHAR AS currency, NULL::BIGINT AS rate_id, NULL::DECIMAL(12,6) AS rate_to_eur,
       NULL::TIMESTAMP AS effective_at, NULL::TIMESTAMP AS last_paid_at;
CREATE UNIQUE INDEX IF NOT EXISTS currency_state_id ON currency_state (currency);

CREATE TABLE IF NOT EXISTS payments_eur (
    payment_id  VARCHAR PRIMARY KEY,
    merchant_id INTEGER,
    currency    VARCHAR,
    amount      DECIMAL(12,2),
    paid_at     TIMESTAMP,
    rate_to_eur DECIMAL(12,6),
    amount_eur  DECIMAL(14,2)
);

CREATE OR REPLACE TEMP TABLE known_rates AS
SELECT h.rate_id FROM rate_history AS h
WHERE h.rate_id IN (SELECT rate_id FROM incoming.fx_rates UNION ALL SELECT -1);

CREATE OR REPLACE TEMP TABLE known_payments AS
SELECT h.payment_id FROM payment_history AS h
WHERE h.payment_id IN (SELECT payment_id FROM incoming.payments UNION ALL SELECT '');

CREATE OR REPLACE TEMP TABLE fresh_rates AS
SELECT DISTINCT ON (rate_id) rate_id, currency, rate_to_eur, effective_at
FROM incoming.fx_rates
WHERE rate_id NOT IN (SELECT rate_id FROM known_rates)
ORDER BY rate_id;

CREATE OR REPLACE TEMP TABLE fresh_payments AS
SELECT DISTINCT ON (payment_id) payment_id, merchant_id, currency, amount, paid_at
FROM incoming.payments
WHERE payment_id NOT IN (SELECT payment_id FROM known_payments)
ORDER BY payment_id;

INSERT INTO rate_history SELECT * FROM fresh_rates;
INSERT INTO payment_history SELECT * FROM fresh_payments;

CREATE OR REPLACE TEMP TABLE state AS
SELECT s.* FROM currency_state AS s
WHERE s.currency IN (SELECT currency FROM fresh_rates UNION ALL
                     SELECT currency FROM fresh_payments UNION ALL SELECT '');
DELETE FROM state WHERE currency = '';

-- Currencies whose stored payments a new rate may change, and currencies with a new payment
-- before their latest stored rate: both need the rate history.
CREATE OR REPLACE TEMP TABLE late_rate_currencies AS
SELECT DISTINCT r.currency FROM fresh_rates AS r JOIN state AS s USING (currency)
WHERE r.effective_at <= s.last_paid_at;

CREATE OR REPLACE TEMP TABLE rate_currencies AS
SELECT currency FROM late_rate_currencies
UNION
SELECT p.currency FROM fresh_payments AS p JOIN state AS s USING (currency)
WHERE p.paid_at < s.effective_at;

CREATE OR REPLACE TEMP TABLE rate_context AS
SELECT h.* FROM rate_history AS h
WHERE h.currency IN (SELECT currency FROM rate_currencies UNION ALL SELECT '');

CREATE OR REPLACE TEMP TABLE restated AS
SELECT h.* FROM payment_history AS h
WHERE h.currency IN (SELECT currency FROM late_rate_currencies UNION ALL SELECT '')
  AND h.payment_id NOT IN (SELECT payment_id FROM fresh_payments);

CREATE OR REPLACE TEMP TABLE candidate_rates AS
SELECT rate_id, currency, rate_to_eur, effective_at FROM rate_context
UNION
SELECT rate_id, currency, rate_to_eur, effective_at FROM fresh_rates
UNION
SELECT rate_id, currency, rate_to_eur, effective_at FROM state WHERE rate_id IS NOT NULL;

CREATE OR REPLACE TEMP TABLE converted AS
WITH pays AS (
    SELECT * FROM fresh_payments
    UNION ALL
    SELECT * FROM restated
),
matched AS (
    SELECT
        p.*,
        CASE WHEN p.currency = 'EUR' THEN 1 ELSE r.rate_to_eur END AS rate
    FROM pays AS p
    LEFT JOIN candidate_rates AS r
      ON r.currency = p.currency AND r.effective_at <= p.paid_at
    QUALIFY row_number() OVER (PARTITION BY p.payment_id
                               ORDER BY r.effective_at DESC NULLS LAST, r.rate_id DESC) = 1
)
SELECT
    payment_id, merchant_id, currency, amount, paid_at,
    CAST(rate AS DECIMAL(12,6))                    AS rate_to_eur,
    CAST(round(amount * rate, 2) AS DECIMAL(14,2)) AS amount_eur
FROM matched;

CREATE OR REPLACE TEMP TABLE restated_ids AS SELECT payment_id FROM restated;

DELETE FROM payments_eur
WHERE payment_id IN (SELECT payment_id FROM restated_ids UNION ALL SELECT '');

INSERT INTO payments_eur SELECT * FROM converted;

CREATE OR REPLACE TEMP TABLE new_state AS
WITH rates AS (
    SELECT currency, rate_id, rate_to_eur, effective_at FROM state WHERE rate_id IS NOT NULL
    UNION ALL
    SELECT currency, rate_id, rate_to_eur, effective_at FROM fresh_rates
), latest_rate AS (
    SELECT currency, arg_max_null(rate_id, (effective_at, rate_id)) AS rate_id,
           arg_max_null(rate_to_eur, (effective_at, rate_id)) AS rate_to_eur,
           max(effective_at) AS effective_at
    FROM rates GROUP BY currency
), paid AS (
    SELECT currency, max(last_paid_at) AS last_paid_at
    FROM (SELECT currency, last_paid_at FROM state
          UNION ALL SELECT currency, paid_at FROM fresh_payments)
    GROUP BY currency
)
SELECT c.currency, r.rate_id, r.rate_to_eur, r.effective_at, p.last_paid_at
FROM (SELECT currency FROM rates UNION SELECT currency FROM paid) AS c
LEFT JOIN latest_rate AS r USING (currency)
LEFT JOIN paid AS p USING (currency);

-- The sentinel goes with the stored rows (never an empty lookup) and comes back.
DELETE FROM currency_state
WHERE currency IN (SELECT currency FROM state UNION ALL SELECT '');

INSERT INTO currency_state
SELECT * FROM new_state UNION ALL SELECT '', NULL, NULL, NULL, NULL;

DROP TABLE new_state;
DROP TABLE restated_ids;
DROP TABLE converted;
DROP TABLE candidate_rates;
DROP TABLE restated;
DROP TABLE rate_context;
DROP TABLE rate_currencies;
DROP TABLE late_rate_currencies;
DROP TABLE state;
DROP TABLE fresh_payments;
DROP TABLE fresh_rates;
DROP TABLE known_payments;
DROP TABLE known_rates;

COMMIT;
