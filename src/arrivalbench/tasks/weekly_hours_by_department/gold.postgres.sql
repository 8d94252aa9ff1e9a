-- entry_state keeps every entry's highest revision seen so far, deletions included: a revision
-- replaces the stored one only when its number is higher (MERGE with a revision guard). The
-- weekly table is recomputed from the state.
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
        SELECT *, row_number() OVER (PARTITION BY entry_id ORDER BY revision DESC NULLS LAST) AS rn
        FROM incoming.timesheet_revisions
    ) AS latest
    WHERE rn = 1
) AS r
ON s.entry_id = r.entry_id
WHEN MATCHED AND r.revision > s.revision THEN UPDATE SET
    revision = r.revision, department = r.department, work_date = r.work_date,
    hours = r.hours, status = r.status
WHEN NOT MATCHED THEN INSERT VALUES
    (r.entry_id, r.revision, r.department, r.work_date, r.hours, r.status);

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
