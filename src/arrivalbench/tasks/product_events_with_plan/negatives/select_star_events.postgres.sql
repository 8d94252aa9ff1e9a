-- Keep raw copies of both feeds with their own columns, each id once, and tag all events again
-- on every run.
CREATE TABLE IF NOT EXISTS plan_history AS SELECT * FROM incoming.plan_changes LIMIT 0;

CREATE TABLE IF NOT EXISTS event_history AS SELECT * FROM incoming.product_events LIMIT 0;

INSERT INTO plan_history
SELECT DISTINCT * FROM incoming.plan_changes
WHERE change_id NOT IN (SELECT change_id FROM plan_history);

INSERT INTO event_history
SELECT DISTINCT * FROM incoming.product_events
WHERE event_id NOT IN (SELECT event_id FROM event_history);

DROP TABLE IF EXISTS events_with_plan;

CREATE TABLE events_with_plan AS
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
) AS tagged
WHERE rn = 1;
