-- Keep every save received; a subscription's state is its save with the highest version.
CREATE TABLE IF NOT EXISTS subscription_change_log (
    change_id       BIGINT,
    subscription_id INTEGER,
    version         INTEGER,
    plan            TEXT,
    seats           INTEGER,
    monthly_price   DECIMAL(10,2),
    status          TEXT,
    changed_at      TIMESTAMP
);

INSERT INTO subscription_change_log
SELECT change_id, subscription_id, version, plan, seats, monthly_price, status, changed_at
FROM incoming.subscription_changes;

DROP TABLE IF EXISTS mrr_by_plan;

CREATE TABLE mrr_by_plan AS
SELECT
    l.plan,
    count(*)                                    AS subscriptions,
    sum(l.monthly_price * COALESCE(l.seats, 1)) AS mrr
FROM subscription_change_log AS l
JOIN (SELECT subscription_id, max(version) AS version FROM subscription_change_log
      GROUP BY subscription_id) AS m USING (subscription_id, version)
WHERE l.status IN ('active', 'past_due')
GROUP BY l.plan;
