-- Incremental: the history table is keyed on (employee, version), which a repeated assignment
-- repeats, so it is its own record of what was applied. A run reads the stored rows of the
-- employees whose new assignments it carries, and rewrites only those employees' rows, with
-- each row closed by the next version's start; in one transaction, so that a retried batch
-- finds its assignments stored and changes nothing.
CREATE TABLE IF NOT EXISTS employee_department_history (
    employee_id INTEGER,
    version     INTEGER,
    department  VARCHAR,
    cost_center VARCHAR,
    valid_from  TIMESTAMP,
    valid_to    TIMESTAMP,
    is_current  BOOLEAN,
    PRIMARY KEY (employee_id, version)
);

-- No key list a lookup joins against is ever empty (an empty one looks up employee 0):
-- DuckDB pushes the keys of a join's small side into the scan of the stored table, but from an
-- empty side it pushes nothing and reads the table whole. A placeholder employee is rewritten
-- from its own stored rows, so it never changes.
CREATE OR REPLACE TEMP TABLE batch_employees AS
SELECT DISTINCT employee_id FROM incoming.department_assignments
UNION ALL
SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM incoming.department_assignments);

CREATE OR REPLACE TEMP TABLE stored AS
SELECT h.employee_id, h.version, h.department, h.cost_center, h.valid_from
FROM employee_department_history AS h
WHERE h.employee_id IN (SELECT employee_id FROM batch_employees);

CREATE OR REPLACE TEMP TABLE fresh AS
SELECT DISTINCT ON (a.employee_id, a.version)
       a.employee_id, a.version, a.department, a.cost_center, a.effective_at AS valid_from
FROM incoming.department_assignments AS a
ANTI JOIN stored AS s ON s.employee_id = a.employee_id AND s.version = a.version
ORDER BY a.employee_id, a.version, a.change_id;

-- The employees with a new assignment (or the placeholder): all their rows are rewritten.
CREATE OR REPLACE TEMP TABLE changed AS
SELECT DISTINCT employee_id FROM fresh
UNION ALL SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM fresh);

CREATE OR REPLACE TEMP TABLE rewritten AS
SELECT employee_id, version, department, cost_center, valid_from,
       lead(valid_from) OVER w         AS valid_to,
       lead(valid_from) OVER w IS NULL AS is_current
FROM (
    SELECT * FROM stored WHERE employee_id IN (SELECT employee_id FROM changed)
    UNION ALL
    SELECT * FROM fresh
)
WINDOW w AS (PARTITION BY employee_id ORDER BY version);

BEGIN TRANSACTION;

DELETE FROM employee_department_history
WHERE employee_id IN (SELECT employee_id FROM changed);

INSERT INTO employee_department_history SELECT * FROM rewritten;

COMMIT;
