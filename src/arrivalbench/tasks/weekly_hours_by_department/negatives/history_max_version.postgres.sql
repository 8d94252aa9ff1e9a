-- Keep every revision received; an entry counts as its revision with the highest number.
CREATE TABLE IF NOT EXISTS revision_log (
    revision_id BIGINT,
    entry_id    VARCHAR,
    revision    INTEGER,
    department  VARCHAR,
    work_date   DATE,
    hours       DECIMAL(5,2),
    status      VARCHAR
);

INSERT INTO revision_log
SELECT revision_id, entry_id, revision, department, work_date, hours, status
FROM incoming.timesheet_revisions;

DROP TABLE IF EXISTS weekly_department_hours;

CREATE TABLE weekly_department_hours AS
SELECT
    l.department,
    CAST(date_trunc('week', CAST(l.work_date AS TIMESTAMP)) AS DATE) AS week,
    count(*)                                                         AS entries,
    sum(l.hours)                                                     AS hours
FROM revision_log AS l
JOIN (SELECT entry_id, max(revision) AS revision FROM revision_log GROUP BY entry_id) AS m
  USING (entry_id, revision)
WHERE l.status <> 'deleted'
GROUP BY l.department, CAST(date_trunc('week', CAST(l.work_date AS TIMESTAMP)) AS DATE);
