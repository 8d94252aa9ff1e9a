-- subscription_state holds each subscription's highest version seen so far: a save replaces
-- the stored one only when its version is higher (ON CONFLICT ... DO UPDATE ... WHERE). The
-- MRR table is then recomputed from the state.
CREATE TABLE IF NOT EXISTS subscription_state (
    subscription_id INTEGER PRIMARY KEY,
    version         INTEGER,
    plan            TEXT,
    seats           INTEGER,
    monthly_price   DECIMAL(10,2),
    status          TEXT
);

INSERT INTO subscription_state AS s
SELECT subscription_id, version, plan, seats, monthly_price, status
FROM (SELECT *, row_number() OVER (PARTITION BY subscription_id
                                   ORDER BY version DESC NULLS LAST) AS rn
      FROM incoming.subscription_changes) AS ranked
WHERE rn = 1
ON CONFLICT (subscription_id) DO UPDATE SET
    version = EXCLUDED.version, plan = EXCLUDED.plan, seats = EXCLUDED.seats,
    monthly_price = EXCLUDED.monthly_price, status = EXCLUDED.status
WHERE EXCLUDED.version > s.version;

DROP TABLE IF EXISTS mrr_by_plan;

CREATE TABLE mrr_by_plan AS
SELECT
    plan,
    count(*)                                AS subscriptions,
    sum(monthly_price * COALESCE(seats, 1)) AS mrr
FROM subscription_state
WHERE status IN ('active', 'past_due')
GROUP BY plan;
