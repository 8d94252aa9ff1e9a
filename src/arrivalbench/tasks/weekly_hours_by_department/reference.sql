SELECT
    department,
    CAST(date_trunc('week', work_date) AS DATE) AS week,
    count(*)                                    AS entries,
    sum(hours)                                  AS hours
FROM (
    SELECT * FROM timesheet_revisions
    QUALIFY row_number() OVER (PARTITION BY entry_id ORDER BY revision DESC) = 1
)
WHERE status <> 'deleted'
GROUP BY department, CAST(date_trunc('week', work_date) AS DATE)
