-- Keep every record received; the directory holds, per employee, the record with the highest
-- version, unless it says terminated.
CREATE TABLE IF NOT EXISTS employee_change_log (
    change_id   BIGINT,
    employee_id INTEGER,
    version     INTEGER,
    full_name   TEXT,
    title       TEXT,
    department  TEXT,
    manager_id  INTEGER,
    status      TEXT,
    changed_at  TIMESTAMP
);

INSERT INTO employee_change_log
SELECT change_id, employee_id, version, full_name, title, department, manager_id, status,
       changed_at
FROM incoming.employee_changes;

DROP TABLE IF EXISTS employee_directory;

CREATE TABLE employee_directory AS
SELECT l.employee_id, l.full_name, l.title, l.department, l.manager_id, l.status
FROM employee_change_log AS l
WHERE l.version = (SELECT max(version) FROM employee_change_log AS m
                   WHERE m.employee_id = l.employee_id)
  AND l.status <> 'terminated';
