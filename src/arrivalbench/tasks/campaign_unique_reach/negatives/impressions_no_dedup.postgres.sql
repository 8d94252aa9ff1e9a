-- Keep every delivered impression, then recompute the daily reach from the history.
CREATE TABLE IF NOT EXISTS impression_history (
    impression_id TEXT,
    campaign_id   INTEGER,
    user_id       TEXT,
    served_at     TIMESTAMP
);

INSERT INTO impression_history
SELECT impression_id, campaign_id, user_id, served_at
FROM incoming.impressions_served;

DROP TABLE IF EXISTS campaign_reach_daily;

CREATE TABLE campaign_reach_daily AS
WITH i AS (
    SELECT *, CAST(served_at AS DATE) AS day FROM impression_history
),
first_day AS (
    SELECT campaign_id, user_id, min(day) AS day
    FROM i WHERE user_id IS NOT NULL
    GROUP BY campaign_id, user_id
),
daily AS (
    SELECT
        campaign_id,
        day,
        count(*)                                    AS impressions,
        count(DISTINCT user_id)                     AS reach,
        count(user_id)                              AS with_user
    FROM i
    GROUP BY campaign_id, day
)
SELECT
    d.campaign_id,
    d.day,
    d.impressions,
    d.reach,
    (SELECT count(*) FROM first_day AS f
     WHERE f.campaign_id = d.campaign_id AND f.day = d.day) AS new_reach,
    CASE WHEN d.reach > 0 THEN CAST(d.with_user AS DOUBLE PRECISION) / d.reach END AS avg_frequency
FROM daily AS d;
