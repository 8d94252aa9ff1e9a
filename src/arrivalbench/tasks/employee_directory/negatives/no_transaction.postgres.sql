-- The changes not applied before are marked as applied, folded into employee_state (a newer
-- version replaces an older one, never the reverse), and the directory rows of the employees
-- they touch are refreshed from the state.
CREATE TABLE IF NOT EXISTS applied_changes (change_id BIGINT PRIMARY KEY);

CREATE TEMP TABLE fresh AS
SELECT DISTINCT change_id, employee_id, version, full_name, title, department, manager_id,
       status
FROM incoming.employee_changes
WHERE change_id NOT IN (SELECT change_id FROM applied_changes);

INSERT INTO applied_changes SELECT change_id FROM fresh;

CREATE TABLE IF NOT EXISTS employee_state (
    employee_id INTEGER PRIMARY KEY,
    version     INTEGER,
    full_name   TEXT,
    title       TEXT,
    department  TEXT,
    manager_id  INTEGER,
    status      TEXT
);

CREATE TABLE IF NOT EXISTS employee_directory (
    employee_id INTEGER,
    full_name   TEXT,
    title       TEXT,
    department  TEXT,
    manager_id  INTEGER,
    status      TEXT
);

INSERT INTO employee_state AS s
SELECT employee_id, version, full_name, title, department, manager_id, status
FROM (SELECT *, row_number() OVER (PARTITION BY employee_id
                                   ORDER BY version DESC NULLS LAST) AS rn
      FROM fresh) AS ranked
WHERE rn = 1
ON CONFLICT (employee_id) DO UPDATE SET
    version = EXCLUDED.version, full_name = EXCLUDED.full_name, title = EXCLUDED.title,
    department = EXCLUDED.department, manager_id = EXCLUDED.manager_id,
    status = EXCLUDED.status
WHERE EXCLUDED.version > s.version;

DELETE FROM employee_directory
WHERE employee_id IN (SELECT employee_id FROM fresh);

INSERT INTO employee_directory
SELECT employee_id, full_name, title, department, manager_id, status
FROM employee_state
WHERE employee_id IN (SELECT employee_id FROM fresh)
  AND status <> 'terminated';

