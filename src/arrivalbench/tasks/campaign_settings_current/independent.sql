WITH cur AS (
  SELECT *,
         row_number() OVER (PARTITION BY campaign_id ORDER BY version DESC) AS rn
  FROM campaign_changes
)
SELECT CAST(campaign_id AS INTEGER) AS campaign_id,
       CAST(name AS VARCHAR) AS name,
       CAST(status AS VARCHAR) AS status,
       CAST(daily_budget AS DECIMAL(10,2)) AS daily_budget,
       CAST(bid_strategy AS VARCHAR) AS bid_strategy,
       CAST(end_date AS DATE) AS end_date,
       CAST(version AS INTEGER) AS version
FROM cur
WHERE rn = 1
  AND status IS DISTINCT FROM 'archived'
ORDER BY campaign_id
