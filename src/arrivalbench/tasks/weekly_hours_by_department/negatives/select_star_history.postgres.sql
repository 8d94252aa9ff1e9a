-- Keep a raw copy of the timesheet feed with its own columns, each revision id once; recompute
-- the weekly hours from every entry's highest revision.
CREATE TABLE IF NOT EXISTS timesheet_revisions_raw AS
SELECT * FROM incoming.timesheet_revisions LIMIT 0;

INSERT INTO timesheet_revisions_raw
SELECT DISTINCT * FROM incoming.timesheet_revisions
WHERE revision_id NOT IN (SELECT revision_id FROM timesheet_revisions_raw);

DROP TABLE IF EXISTS weekly_department_hours;

CREATE TABLE weekly_department_hours AS
SELECT
    department,
    CAST(date_trunc('week', CAST(work_date AS TIMESTAMP)) AS DATE) AS week,
    count(*)                                                       AS entries,
    sum(hours)                                                     AS hours
FROM (
    SELECT *, row_number() OVER (PARTITION BY entry_id ORDER BY revision DESC NULLS LAST) AS rn
    FROM timesheet_revisions_raw
)
WHERE rn = 1 AND status <> 'deleted'
GROUP BY department, CAST(date_trunc('week', CAST(work_date AS TIMESTAMP)) AS DATE);
