-- Plan changes and events are kept once per id. Every account the batch touches (through a plan
-- change or an event) has its events deleted from the target and inserted again, tagged from
-- the histories.
CREATE TABLE IF NOT EXISTS plan_history (
    change_id  BIGINT PRIMARY KEY,
    account_id INTEGER,
    plan       VARCHAR,
    version    INTEGER,
    changed_at TIMESTAMP
);

CREATE TABLE IF NOT EXISTS event_history (
    event_id    VARCHAR PRIMARY KEY,
    account_id  INTEGER,
    user_id     BIGINT,
    event_name  VARCHAR,
    occurred_at TIMESTAMP
);

CREATE TABLE IF NOT EXISTS events_with_plan (
    event_id    VARCHAR,
    account_id  INTEGER,
    user_id     BIGINT,
    event_name  VARCHAR,
    occurred_at TIMESTAMP,
    plan        VARCHAR
);

INSERT INTO plan_history
SELECT DISTINCT change_id, account_id, plan, version, changed_at FROM incoming.plan_changes
ON CONFLICT DO NOTHING;

INSERT INTO event_history
SELECT DISTINCT event_id, account_id, user_id, event_name, occurred_at
FROM incoming.product_events
ON CONFLICT DO NOTHING;

DELETE FROM events_with_plan
WHERE account_id IN (SELECT account_id FROM incoming.plan_changes
                     UNION SELECT account_id FROM incoming.product_events);

INSERT INTO events_with_plan
SELECT event_id, account_id, user_id, event_name, occurred_at, plan
FROM (
    SELECT
        e.event_id,
        e.account_id,
        e.user_id,
        e.event_name,
        e.occurred_at,
        COALESCE(c.plan, 'free') AS plan,
        row_number() OVER (PARTITION BY e.event_id ORDER BY c.version DESC NULLS LAST) AS rn
    FROM event_history AS e
    LEFT JOIN plan_history AS c
      ON c.account_id = e.account_id AND c.changed_at <= e.occurred_at
    WHERE e.account_id IN (SELECT account_id FROM incoming.plan_changes
                           UNION SELECT account_id FROM incoming.product_events)
) AS tagged
WHERE rn = 1;
