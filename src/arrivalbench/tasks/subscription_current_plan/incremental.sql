-- Incremental: the target is the state itself, keyed on the subscription id. Each run merges
-- the batch's highest version per subscription, and the join on the primary key reads only the
-- stored rows of the subscriptions the batch mentions; a stored row is replaced only by a higher
-- version, so duplicates, retries and late messages change nothing they should not.
CREATE TABLE IF NOT EXISTS subscription_current (
    subscription_id INTEGER PRIMARY KEY,
    plan            VARCHAR,
    seats           INTEGER,
    status          VARCHAR,
    version         INTEGER,
    updated_at      TIMESTAMP
);

MERGE INTO subscription_current AS t
USING (
    SELECT subscription_id, plan, seats, status, version, updated_at
    FROM incoming.subscription_events
    QUALIFY row_number() OVER (PARTITION BY subscription_id ORDER BY version DESC) = 1
) AS s
ON t.subscription_id = s.subscription_id
WHEN MATCHED AND s.version > t.version THEN UPDATE SET
    plan = s.plan, seats = s.seats, status = s.status, version = s.version,
    updated_at = s.updated_at
WHEN NOT MATCHED THEN INSERT
    (subscription_id, plan, seats, status, version, updated_at)
    VALUES (s.subscription_id, s.plan, s.seats, s.status, s.version, s.updated_at);
