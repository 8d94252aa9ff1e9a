-- Incremental: plan changes and events are kept once per id in histories keyed (indexed) on the
-- id and indexed on the account, and account_state keeps per account the plan of its highest
-- version, the time of its latest change and the time of its latest event. A run looks up only
-- the ids its batch carries; a new event at or after its account's latest change is tagged from
-- the state and the batch's own changes (one row per account), and only an account with a late
-- event or a late change (one at or before a stored event) is read from the histories, its
-- stored events retagged and replaced by key. One transaction, so a retried batch changes
-- nothing twice.
-- DuckDB reads the whole stored side of a join whose other side ends up empty, so the histories
-- and the state hold one sentinel row each that every lookup also asks for, and target rows
-- are deleted only when they are known to be stored.
BEGIN TRANSACTION;

-- Created with their sentinel rows, once (the statements do nothing when the tables exist).
CREATE TABLE IF NOT EXISTS plan_history AS
SELECT -1::BIGINT AS change_id, NULL::INTEGER AS account_id, NULL::VARCHAR AS plan,
       NULL::INTEGER AS version, NULL::TIMESTAMP AS changed_at;
CREATE UNIQUE INDEX IF NOT EXISTS plan_history_id ON plan_history (change_id);
CREATE INDEX IF NOT EXISTS plan_history_account ON plan_history (account_id);

CREATE TABLE IF NOT EXISTS event_history AS
SELECT ''::VARCHAR AS event_id, NULL::INTEGER AS account_id, NULL::BIGINT AS user_id,
       NULL::VARCHAR AS event_name, NULL::TIMESTAMP AS occurred_at;
CREATE UNIQUE INDEX IF NOT EXISTS event_history_id ON event_history (event_id);
CREATE INDEX IF NOT EXISTS event_history_account ON event_history (account_id);

CREATE TABLE IF NOT EXISTS account_state AS
SELECT -1::INTEGER AS account_id, NULL::INTEGER AS version, NULL::VARCHAR AS plan,
       NULL::TIMESTAMP AS last_changed_at, NULL::TIMESTAMP AS last_event_at;
CREATE UNIQUE INDEX IF NOT EXISTS account_state_id ON account_state (account_id);

CREATE TABLE IF NOT EXISTS events_with_plan (
    event_id    VARCHAR PRIMARY KEY,
    account_id  INTEGER,
    user_id     BIGINT,
    event_name  VARCHAR,
    occurred_at TIMESTAMP,
    plan        VARCHAR
);

CREATE OR REPLACE TEMP TABLE known_changes AS
SELECT h.change_id FROM plan_history AS h
WHERE h.change_id IN (SELECT change_id FROM incoming.plan_changes UNION ALL SELECT -1);

CREATE OR REPLACE TEMP TABLE known_events AS
SELECT h.event_id FROM event_history AS h
WHERE h.event_id IN (SELECT event_id FROM incoming.product_events UNION ALL SELECT '');

CREATE OR REPLACE TEMP TABLE fresh_changes AS
SELECT DISTINCT ON (change_id) change_id, account_id, plan, version, changed_at
FROM incoming.plan_changes
WHERE change_id NOT IN (SELECT change_id FROM known_changes)
ORDER BY change_id;

CREATE OR REPLACE TEMP TABLE fresh_events AS
SELECT DISTINCT ON (event_id) event_id, account_id, user_id, event_name, occurred_at
FROM incoming.product_events
WHERE event_id NOT IN (SELECT event_id FROM known_events)
ORDER BY event_id;

INSERT INTO plan_history SELECT * FROM fresh_changes;
INSERT INTO event_history SELECT * FROM fresh_events;

CREATE OR REPLACE TEMP TABLE state AS
SELECT s.* FROM account_state AS s
WHERE s.account_id IN (SELECT account_id FROM fresh_changes UNION ALL
                       SELECT account_id FROM fresh_events UNION ALL SELECT -1);
DELETE FROM state WHERE account_id = -1;

-- Accounts whose stored events a new change may retag, and accounts with a new event before
-- their latest stored change: both need the change history.
CREATE OR REPLACE TEMP TABLE late_change_accounts AS
SELECT DISTINCT c.account_id FROM fresh_changes AS c JOIN state AS s USING (account_id)
WHERE c.changed_at <= s.last_event_at;

CREATE OR REPLACE TEMP TABLE history_accounts AS
SELECT account_id FROM late_change_accounts
UNION
SELECT e.account_id FROM fresh_events AS e JOIN state AS s USING (account_id)
WHERE e.occurred_at < s.last_changed_at;

CREATE OR REPLACE TEMP TABLE change_context AS
SELECT h.* FROM plan_history AS h
WHERE h.account_id IN (SELECT account_id FROM history_accounts UNION ALL SELECT -1);

CREATE OR REPLACE TEMP TABLE retagged AS
SELECT h.* FROM event_history AS h
WHERE h.account_id IN (SELECT account_id FROM late_change_accounts UNION ALL SELECT -1)
  AND h.event_id NOT IN (SELECT event_id FROM fresh_events);

-- Every stored change of an account not read from the history is summed up by its state: a
-- change at its latest change time with its highest version.
CREATE OR REPLACE TEMP TABLE candidate_changes AS
SELECT account_id, plan, version, changed_at FROM change_context
UNION ALL
SELECT account_id, plan, version, changed_at FROM fresh_changes
UNION ALL
SELECT account_id, plan, version, last_changed_at FROM state
WHERE version IS NOT NULL AND account_id NOT IN (SELECT account_id FROM history_accounts);

CREATE OR REPLACE TEMP TABLE tagged AS
SELECT
    e.event_id, e.account_id, e.user_id, e.event_name, e.occurred_at,
    COALESCE(c.plan, 'free') AS plan
FROM (SELECT * FROM fresh_events UNION ALL SELECT * FROM retagged) AS e
LEFT JOIN candidate_changes AS c
  ON c.account_id = e.account_id AND c.changed_at <= e.occurred_at
QUALIFY row_number() OVER (PARTITION BY e.event_id ORDER BY c.version DESC NULLS LAST) = 1;

CREATE OR REPLACE TEMP TABLE retagged_ids AS SELECT event_id FROM retagged;

DELETE FROM events_with_plan
WHERE event_id IN (SELECT event_id FROM retagged_ids UNION ALL SELECT '');

INSERT INTO events_with_plan SELECT * FROM tagged;

CREATE OR REPLACE TEMP TABLE new_state AS
WITH changes AS (
    SELECT account_id, version, plan, last_changed_at AS changed_at FROM state
    WHERE version IS NOT NULL
    UNION ALL
    SELECT account_id, version, plan, changed_at FROM fresh_changes
), latest AS (
    SELECT account_id, max(version) AS version, arg_max_null(plan, version) AS plan,
           max(changed_at) AS last_changed_at
    FROM changes GROUP BY account_id
), seen AS (
    SELECT account_id, max(last_event_at) AS last_event_at
    FROM (SELECT account_id, last_event_at FROM state
          UNION ALL SELECT account_id, occurred_at FROM fresh_events)
    GROUP BY account_id
)
SELECT a.account_id, l.version, l.plan, l.last_changed_at, s.last_event_at
FROM (SELECT account_id FROM latest UNION SELECT account_id FROM seen) AS a
LEFT JOIN latest AS l USING (account_id)
LEFT JOIN seen AS s USING (account_id);

-- The sentinel goes with the stored rows (never an empty lookup) and comes back.
DELETE FROM account_state
WHERE account_id IN (SELECT account_id FROM state UNION ALL SELECT -1);

INSERT INTO account_state
SELECT * FROM new_state UNION ALL SELECT -1, NULL, NULL, NULL, NULL;

DROP TABLE new_state;
DROP TABLE retagged_ids;
DROP TABLE tagged;
DROP TABLE candidate_changes;
DROP TABLE retagged;
DROP TABLE change_context;
DROP TABLE history_accounts;
DROP TABLE late_change_accounts;
DROP TABLE state;
DROP TABLE fresh_events;
DROP TABLE fresh_changes;
DROP TABLE known_events;
DROP TABLE known_changes;

COMMIT;
