-- The classic type 2 load: for each employee with new assignments, close the open row at the
-- first new assignment's start, then insert the new assignments, the last one open.
CREATE TABLE IF NOT EXISTS employee_department_history (
    employee_id INTEGER,
    version     INTEGER,
    department  TEXT,
    cost_center TEXT,
    valid_from  TIMESTAMP,
    valid_to    TIMESTAMP,
    is_current  BOOLEAN
);

CREATE TEMP TABLE fresh AS
SELECT DISTINCT employee_id, version, department, cost_center, effective_at
FROM incoming.department_assignments AS a
WHERE NOT EXISTS (SELECT 1 FROM employee_department_history AS h
                  WHERE h.employee_id = a.employee_id AND h.version = a.version);

UPDATE employee_department_history AS h
SET valid_to = f.first_start, is_current = false
FROM (SELECT employee_id, min(effective_at) AS first_start FROM fresh GROUP BY employee_id) AS f
WHERE h.employee_id = f.employee_id AND h.is_current;

INSERT INTO employee_department_history
SELECT
    employee_id,
    version,
    department,
    cost_center,
    effective_at,
    lead(effective_at) OVER w,
    lead(effective_at) OVER w IS NULL
FROM fresh
WINDOW w AS (PARTITION BY employee_id ORDER BY version);
