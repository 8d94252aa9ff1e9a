-- Incremental: subscription_state keeps each subscription's highest version seen so far. A run
-- reads the stored state of the subscriptions its batch mentions; for those whose version moves
-- forward it takes the old state's MRR out of its plan and adds the new one, reading and
-- rewriting only the plans those changes touch. State and plans change in one transaction (a
-- retried batch finds its versions already applied and changes nothing); a repeated message
-- carries a version already seen.
CREATE TABLE IF NOT EXISTS subscription_state (
    subscription_id INTEGER PRIMARY KEY,
    version         INTEGER,
    plan            VARCHAR,
    seats           INTEGER,
    monthly_price   DECIMAL(10,2),
    status          VARCHAR
);

CREATE TABLE IF NOT EXISTS mrr_by_plan (
    plan          VARCHAR PRIMARY KEY,
    subscriptions BIGINT,
    mrr           DECIMAL(14,2)
);

CREATE OR REPLACE TEMP TABLE newest AS
SELECT subscription_id, version, plan, seats, monthly_price, status
FROM incoming.subscription_changes
QUALIFY row_number() OVER (PARTITION BY subscription_id ORDER BY version DESC) = 1;

-- The key lists the lookups below join against are never empty (an empty one looks up 0 or
-- ''): DuckDB pushes the keys of a join's small side into the scan of the stored table, but
-- from an empty side it pushes nothing and reads the table whole. The deletes also require the
-- key to be a real one, so that a stored key 0 or '' is never deleted by mistake.
CREATE OR REPLACE TEMP TABLE batch_keys AS
SELECT subscription_id FROM newest
UNION ALL SELECT coalesce(min(subscription_id), 0) FROM newest;

CREATE OR REPLACE TEMP TABLE stored AS
SELECT s.* FROM subscription_state AS s
WHERE s.subscription_id IN (SELECT subscription_id FROM batch_keys);

CREATE OR REPLACE TEMP TABLE winners AS
SELECT n.* FROM newest AS n LEFT JOIN stored AS s USING (subscription_id)
WHERE s.version IS NULL OR n.version > s.version;

CREATE OR REPLACE TEMP TABLE winner_keys AS
SELECT subscription_id FROM winners
UNION ALL SELECT coalesce(min(subscription_id), 0) FROM winners;

-- What each plan gains (the new states that pay) and loses (the old states that paid).
CREATE OR REPLACE TEMP TABLE plan_delta AS
SELECT plan, sum(n) AS subscriptions, sum(mrr) AS mrr
FROM (
    SELECT plan, 1 AS n, monthly_price * COALESCE(seats, 1) AS mrr
    FROM winners WHERE status IN ('active', 'past_due')
    UNION ALL
    SELECT s.plan, -1, -(s.monthly_price * COALESCE(s.seats, 1))
    FROM stored AS s JOIN winners AS w USING (subscription_id)
    WHERE s.status IN ('active', 'past_due')
)
GROUP BY plan;

CREATE OR REPLACE TEMP TABLE plan_keys AS
SELECT plan FROM plan_delta UNION ALL SELECT coalesce(min(plan), '') FROM plan_delta;

CREATE OR REPLACE TEMP TABLE plan_now AS
SELECT d.plan,
       COALESCE(p.subscriptions, 0) + d.subscriptions AS subscriptions,
       COALESCE(p.mrr, 0) + d.mrr AS mrr
FROM plan_delta AS d
LEFT JOIN (SELECT m.* FROM mrr_by_plan AS m WHERE m.plan IN (SELECT plan FROM plan_keys)) AS p
  USING (plan);

BEGIN TRANSACTION;

DELETE FROM subscription_state
WHERE subscription_id IN (SELECT subscription_id FROM winner_keys)
  AND subscription_id IN (SELECT subscription_id FROM winners);

INSERT INTO subscription_state
SELECT subscription_id, version, plan, seats, monthly_price, status FROM winners;

DELETE FROM mrr_by_plan
WHERE plan IN (SELECT plan FROM plan_keys) AND plan IN (SELECT plan FROM plan_delta);

INSERT INTO mrr_by_plan
SELECT plan, subscriptions, mrr FROM plan_now WHERE subscriptions > 0;

COMMIT;
