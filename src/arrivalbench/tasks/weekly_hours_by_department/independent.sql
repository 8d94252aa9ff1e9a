WITH current_rev AS (
  SELECT *,
         ROW_NUMBER() OVER (PARTITION BY entry_id ORDER BY revision DESC NULLS LAST, revised_at DESC NULLS LAST, revision_id DESC) AS rn
  FROM timesheet_revisions
),
counted AS (
  SELECT department, work_date, hours
  FROM current_rev
  WHERE rn = 1 AND status IS DISTINCT FROM 'deleted'
)
SELECT
  CAST(department AS VARCHAR) AS department,
  CAST(DATE_TRUNC('week', work_date) AS DATE) AS week,
  CAST(COUNT(*) AS BIGINT) AS entries,
  CAST(COALESCE(SUM(hours), 0) AS DECIMAL(10,2)) AS hours
FROM counted
GROUP BY department, DATE_TRUNC('week', work_date)
ORDER BY department NULLS FIRST, week
