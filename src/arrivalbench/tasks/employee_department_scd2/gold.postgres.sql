-- Every delivered assignment lands as it comes; the history (type 2) is rebuilt from the
-- landing table on every run, each change id taken once.
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
WITH assignments AS (
    SELECT DISTINCT ON (change_id) *
    FROM assignments_landing
    ORDER BY change_id
)
SELECT
    employee_id,
    version,
    department,
    cost_center,
    effective_at                      AS valid_from,
    lead(effective_at) OVER w         AS valid_to,
    lead(effective_at) OVER w IS NULL AS is_current
FROM assignments
WINDOW w AS (PARTITION BY employee_id ORDER BY version);
