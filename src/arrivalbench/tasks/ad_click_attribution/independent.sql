WITH matches AS (
  SELECT c.click_id, i.impression_id, i.campaign_id,
         row_number() OVER (PARTITION BY c.click_id
                            ORDER BY i.served_at DESC, i.impression_id DESC) AS rn
  FROM clicks c
  JOIN impressions i
    ON i.user_id = c.user_id
   AND i.served_at <= c.clicked_at
   AND i.served_at >= c.clicked_at - INTERVAL 24 HOUR
  WHERE c.user_id IS NOT NULL
)
SELECT CAST(c.click_id AS VARCHAR) AS click_id,
       CAST(c.user_id AS VARCHAR) AS user_id,
       CAST(c.clicked_at AS TIMESTAMP) AS clicked_at,
       CAST(m.impression_id AS VARCHAR) AS impression_id,
       CAST(m.campaign_id AS INTEGER) AS campaign_id
FROM clicks c
LEFT JOIN matches m ON m.click_id = c.click_id AND m.rn = 1
ORDER BY c.click_id
