-- Keep every message received; the current state is the message whose version is the
-- subscription's highest.
CREATE TABLE IF NOT EXISTS subscription_event_log (
    event_id        BIGINT,
    subscription_id INTEGER,
    version         INTEGER,
    plan            VARCHAR,
    seats           INTEGER,
    status          VARCHAR,
    updated_at      TIMESTAMP
);

INSERT INTO subscription_event_log
SELECT event_id, subscription_id, version, plan, seats, status, updated_at
FROM incoming.subscription_events;

DROP TABLE IF EXISTS subscription_current;

CREATE TABLE subscription_current AS
SELECT l.subscription_id, l.plan, l.seats, l.status, l.version, l.updated_at
FROM subscription_event_log AS l
JOIN (SELECT subscription_id, max(version) AS version
      FROM subscription_event_log GROUP BY subscription_id) AS m
  ON m.subscription_id = l.subscription_id AND m.version = l.version;
