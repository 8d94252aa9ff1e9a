-- Apply each change once, in the order changes reach us: change ids applied before are
-- skipped, and the latest save of an employee in the batch replaces their row.
CREATE TABLE IF NOT EXISTS applied_changes (change_id BIGINT PRIMARY KEY);

CREATE TABLE IF NOT EXISTS employee_directory (
    employee_id INTEGER PRIMARY KEY,
    full_name   TEXT,
    title       TEXT,
    department  TEXT,
    manager_id  INTEGER,
    status      TEXT
);

CREATE TEMP TABLE latest AS
SELECT employee_id, full_name, title, department, manager_id, status
FROM (SELECT *, row_number() OVER (PARTITION BY employee_id
                                   ORDER BY changed_at DESC NULLS LAST,
                                            version DESC NULLS LAST) AS rn
      FROM incoming.employee_changes
      WHERE change_id NOT IN (SELECT change_id FROM applied_changes)) AS ranked
WHERE rn = 1;

DELETE FROM employee_directory
WHERE employee_id IN (SELECT employee_id FROM latest WHERE status = 'terminated');

INSERT INTO employee_directory
SELECT employee_id, full_name, title, department, manager_id, status
FROM latest
WHERE status <> 'terminated'
ON CONFLICT (employee_id) DO UPDATE SET
    full_name = EXCLUDED.full_name, title = EXCLUDED.title, department = EXCLUDED.department,
    manager_id = EXCLUDED.manager_id, status = EXCLUDED.status;

INSERT INTO applied_changes
SELECT DISTINCT change_id FROM incoming.employee_changes
ON CONFLICT DO NOTHING;
