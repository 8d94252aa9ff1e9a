-- Versioned upsert with MERGE: each subscription's highest version in the batch replaces the
-- stored row only if it is newer than the stored version.
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
    FROM (
        SELECT *, row_number() OVER (PARTITION BY subscription_id
                                     ORDER BY version DESC NULLS LAST) AS rn
        FROM incoming.subscription_events
    ) AS e
    WHERE rn = 1
) AS s
ON t.subscription_id = s.subscription_id
WHEN MATCHED AND s.version > t.version THEN UPDATE SET
    plan = s.plan, seats = s.seats, status = s.status, version = s.version,
    updated_at = s.updated_at
WHEN NOT MATCHED THEN INSERT
    (subscription_id, plan, seats, status, version, updated_at)
    VALUES (s.subscription_id, s.plan, s.seats, s.status, s.version, s.updated_at);
