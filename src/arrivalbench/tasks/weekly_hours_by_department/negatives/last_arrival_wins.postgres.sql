-- entry_state keeps every entry as its latest revision to reach us (revision ids applied
-- before are skipped); the weekly table is recomputed from the state.
CREATE TABLE IF NOT EXISTS applied_revisions (revision_id BIGINT PRIMARY KEY);

CREATE TABLE IF NOT EXISTS entry_state (
    entry_id   VARCHAR PRIMARY KEY,
    revision   INTEGER,
    department VARCHAR,
    work_date  DATE,
    hours      DECIMAL(5,2),
    status     VARCHAR
);

MERGE INTO entry_state AS s
USING (
    SELECT entry_id, revision, department, work_date, hours, status
    FROM (
        SELECT *, row_number() OVER (PARTITION BY entry_id
                                     ORDER BY revised_at DESC NULLS LAST,
                                              revision DESC NULLS LAST) AS rn
        FROM incoming.timesheet_revisions
        WHERE revision_id NOT IN (SELECT revision_id FROM applied_revisions)
    ) AS latest
    WHERE rn = 1
) AS r
ON s.entry_id = r.entry_id
WHEN MATCHED THEN UPDATE SET
    revision = r.revision, department = r.department, work_date = r.work_date,
    hours = r.hours, status = r.status
WHEN NOT MATCHED THEN INSERT VALUES
    (r.entry_id, r.revision, r.department, r.work_date, r.hours, r.status);

INSERT INTO applied_revisions
SELECT DISTINCT revision_id FROM incoming.timesheet_revisions
ON CONFLICT DO NOTHING;

DROP TABLE IF EXISTS weekly_department_hours;

CREATE TABLE weekly_department_hours AS
SELECT
    department,
    CAST(date_trunc('week', CAST(work_date AS TIMESTAMP)) AS DATE) AS week,
    count(*)                                                       AS entries,
    sum(hours)                                                     AS hours
FROM entry_state
WHERE status <> 'deleted'
GROUP BY department, CAST(date_trunc('week', CAST(work_date AS TIMESTAMP)) AS DATE);
