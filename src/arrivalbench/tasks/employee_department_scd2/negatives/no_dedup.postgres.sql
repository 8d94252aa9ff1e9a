-- Every delivered assignment lands as it comes; the history is rebuilt from the landing table.
CREATE TABLE IF NOT EXISTS assignments_landing (
    change_id    BIGINT,
    employee_id  INTEGER,
    version      INTEGER,
    department   TEXT,
    cost_center  TEXT,
    effective_at TIMESTAMP
);

INSERT INTO assignments_landing
SELECT change_id, employee_id, version, department, cost_center, effective_at
FROM incoming.department_assignments;

DROP TABLE IF EXISTS employee_department_history;

CREATE TABLE employee_department_history AS
SELECT
    employee_id,
    version,
    department,
    cost_center,
    effective_at                      AS valid_from,
    lead(effective_at) OVER w         AS valid_to,
    lead(effective_at) OVER w IS NULL AS is_current
FROM assignments_landing
WINDOW w AS (PARTITION BY employee_id ORDER BY version);
