-- Incremental: deltas applied by key. entry_state keeps every entry's highest revision seen so
-- far, deletions included, and week_state each (department, week)'s entries and hours under one
-- indexed key. A run reads the stored state of just the entries its batch mentions; where the
-- batch has a higher revision, the entry's old contribution is taken off its group and the new
-- one added, and just those groups' rows of the target are rewritten (a group left with no
-- entry disappears). Replaying a batch finds nothing higher and changes nothing; one
-- transaction.
-- DuckDB reads the whole stored side of a join whose other side ends up empty, so both states
-- hold one sentinel row that every lookup also asks for, and target rows are deleted only for
-- groups known to be stored.
BEGIN TRANSACTION;

-- Created with their sentinel rows, once (the statements do nothing when the tables exist).
CREATE TABLE IF NOT EXISTS entry_state AS
SELECT ''::VARCHAR AS entry_id, NULL::INTEGER AS revision, NULL::VARCHAR AS department,
       NULL::DATE AS work_date, NULL::DECIMAL(5,2) AS hours, NULL::VARCHAR AS status;
CREATE UNIQUE INDEX IF NOT EXISTS entry_state_id ON entry_state (entry_id);

-- week_key: the department (a missing one apart from every named one) and the week.
CREATE TABLE IF NOT EXISTS week_state AS
SELECT ''::VARCHAR AS week_key, NULL::VARCHAR AS department, NULL::DATE AS week,
       NULL::BIGINT AS entries, NULL::DECIMAL(10,2) AS hours;
CREATE UNIQUE INDEX IF NOT EXISTS week_state_key ON week_state (week_key);

CREATE TABLE IF NOT EXISTS weekly_department_hours (
    department VARCHAR,
    week       DATE,
    entries    BIGINT,
    hours      DECIMAL(10,2)
);
CREATE INDEX IF NOT EXISTS weekly_department_hours_week ON weekly_department_hours (week);

CREATE OR REPLACE TEMP TABLE before AS
SELECT s.* FROM entry_state AS s
WHERE s.entry_id IN (SELECT entry_id FROM incoming.timesheet_revisions UNION ALL SELECT '');
DELETE FROM before WHERE entry_id = '';

CREATE OR REPLACE TEMP TABLE winners AS
SELECT r.entry_id, r.revision, r.department, r.work_date, r.hours, r.status,
       b.entry_id IS NOT NULL AS was_stored
FROM (SELECT * FROM incoming.timesheet_revisions
      QUALIFY row_number() OVER (PARTITION BY entry_id ORDER BY revision DESC) = 1) AS r
LEFT JOIN before AS b USING (entry_id)
WHERE b.entry_id IS NULL OR r.revision > b.revision;

CREATE OR REPLACE TEMP TABLE replaced AS
SELECT entry_id FROM winners WHERE was_stored;

-- The sentinel goes with the stored rows (never an empty lookup) and comes back.
DELETE FROM entry_state WHERE entry_id IN (SELECT entry_id FROM replaced UNION ALL SELECT '');

INSERT INTO entry_state
SELECT entry_id, revision, department, work_date, hours, status FROM winners
UNION ALL SELECT '', NULL, NULL, NULL, NULL, NULL;

CREATE OR REPLACE TEMP TABLE delta AS
WITH contributions AS (
    -- the replaced revisions' contributions come off, the winners' go on
    SELECT b.department, b.work_date, -1 AS entries, -b.hours AS hours
    FROM before AS b
    WHERE b.status <> 'deleted' AND b.entry_id IN (SELECT entry_id FROM replaced)
    UNION ALL
    SELECT department, work_date, 1, hours FROM winners WHERE status <> 'deleted'
)
SELECT
    CASE WHEN department IS NULL THEN '-' ELSE '+' || department END || '|'
        || CAST(date_trunc('week', work_date) AS DATE) AS week_key,
    department,
    CAST(date_trunc('week', work_date) AS DATE) AS week,
    sum(entries) AS entries,
    sum(hours) AS hours
FROM contributions
GROUP BY ALL;

CREATE OR REPLACE TEMP TABLE stored AS
SELECT s.* FROM week_state AS s
WHERE s.week_key IN (SELECT week_key FROM delta UNION ALL SELECT '');
DELETE FROM stored WHERE week_key = '';

CREATE OR REPLACE TEMP TABLE updated AS
SELECT d.week_key, d.department, d.week,
       d.entries + coalesce(s.entries, 0) AS entries,
       CAST(coalesce(d.hours, 0) + coalesce(s.hours, 0) AS DECIMAL(10,2)) AS hours
FROM delta AS d LEFT JOIN stored AS s USING (week_key);

-- The sentinel goes with the stored rows (never an empty lookup) and comes back.
DELETE FROM week_state
WHERE week_key IN (SELECT week_key FROM stored UNION ALL SELECT '');

INSERT INTO week_state
SELECT * FROM updated WHERE entries > 0 UNION ALL SELECT '', NULL, NULL, NULL, NULL;

DELETE FROM weekly_department_hours AS w
USING stored AS s
WHERE w.department IS NOT DISTINCT FROM s.department AND w.week = s.week
  AND w.week IN (SELECT week FROM stored UNION ALL SELECT DATE '0001-01-01');

INSERT INTO weekly_department_hours
SELECT department, week, entries, hours FROM updated WHERE entries > 0;

DROP TABLE updated;
DROP TABLE stored;
DROP TABLE delta;
DROP TABLE replaced;
DROP TABLE winners;
DROP TABLE before;

COMMIT;
