SELECT
    c.click_id,
    c.user_id,
    c.clicked_at,
    i.impression_id,
    i.campaign_id
FROM clicks AS c
LEFT JOIN impressions AS i
  ON i.user_id = c.user_id
 AND i.served_at <= c.clicked_at
 AND i.served_at >= c.clicked_at - INTERVAL 24 HOUR
QUALIFY row_number() OVER (PARTITION BY c.click_id
                           ORDER BY i.served_at DESC NULLS LAST, i.impression_id DESC) = 1
