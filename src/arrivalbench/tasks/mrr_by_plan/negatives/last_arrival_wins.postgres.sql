-- subscription_state holds each subscription's latest save as it reaches us (message ids
-- applied before are skipped); the MRR table is recomputed from the state.
CREATE TABLE IF NOT EXISTS applied_changes (change_id BIGINT PRIMARY KEY);

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
                                   ORDER BY changed_at DESC NULLS LAST,
                                            version DESC NULLS LAST) AS rn
      FROM incoming.subscription_changes
      WHERE change_id NOT IN (SELECT change_id FROM applied_changes)) AS ranked
WHERE rn = 1
ON CONFLICT (subscription_id) DO UPDATE SET
    version = EXCLUDED.version, plan = EXCLUDED.plan, seats = EXCLUDED.seats,
    monthly_price = EXCLUDED.monthly_price, status = EXCLUDED.status;

INSERT INTO applied_changes
SELECT DISTINCT change_id FROM incoming.subscription_changes
ON CONFLICT DO NOTHING;

DROP TABLE IF EXISTS mrr_by_plan;

CREATE TABLE mrr_by_plan AS
SELECT
    plan,
    count(*)                                AS subscriptions,
    sum(monthly_price * COALESCE(seats, 1)) AS mrr
FROM subscription_state
WHERE status IN ('active', 'past_due')
GROUP BY plan;
