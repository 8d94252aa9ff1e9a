WITH imp AS (
    SELECT impression_id, campaign_id, user_id, CAST(served_at AS DATE) AS day
    FROM impressions_served
),
first_seen AS (
    SELECT campaign_id, user_id, min(day) AS first_day
    FROM imp
    WHERE user_id IS NOT NULL
    GROUP BY campaign_id, user_id
),
daily AS (
    SELECT campaign_id, day,
           count(*) AS impressions,
           count(user_id) AS user_impressions,
           count(DISTINCT user_id) AS reach
    FROM imp
    GROUP BY campaign_id, day
),
newr AS (
    SELECT campaign_id, first_day AS day, count(*) AS new_reach
    FROM first_seen
    GROUP BY campaign_id, first_day
)
SELECT
    CAST(d.campaign_id AS INTEGER) AS campaign_id,
    CAST(d.day AS DATE) AS day,
    CAST(d.impressions AS BIGINT) AS impressions,
    CAST(d.reach AS BIGINT) AS reach,
    CAST(COALESCE(n.new_reach, 0) AS BIGINT) AS new_reach,
    CAST(CASE WHEN d.reach = 0 THEN NULL ELSE d.user_impressions::DOUBLE / d.reach END AS DOUBLE) AS avg_frequency
FROM daily d
LEFT JOIN newr n ON n.campaign_id = d.campaign_id AND n.day = d.day
ORDER BY campaign_id, day
