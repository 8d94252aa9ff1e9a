-- Keep a raw copy of the billing feed with its own columns, each change id once; recompute the
-- MRR from each subscription's highest version.
CREATE TABLE IF NOT EXISTS subscription_changes_raw AS
SELECT * FROM incoming.subscription_changes LIMIT 0;

INSERT INTO subscription_changes_raw
SELECT DISTINCT * FROM incoming.subscription_changes
WHERE change_id NOT IN (SELECT change_id FROM subscription_changes_raw);

DROP TABLE IF EXISTS mrr_by_plan;

CREATE TABLE mrr_by_plan AS
SELECT
    plan,
    count(*)                                AS subscriptions,
    sum(monthly_price * COALESCE(seats, 1)) AS mrr
FROM (
    SELECT *, row_number() OVER (PARTITION BY subscription_id
                                 ORDER BY version DESC NULLS LAST) AS rn
    FROM subscription_changes_raw
) AS ranked
WHERE rn = 1
  AND status IN ('active', 'past_due')
GROUP BY plan;
