-- Incremental: employee_state keeps each employee's highest version seen so far (terminated employees
-- included, so that an older message can never bring one back). A run reads the stored state of
-- the employees its batch mentions; only the employees whose version moves forward are rewritten,
-- in the state and in the target, in one transaction (a retried batch finds the versions
-- already applied and changes nothing). A repeated message carries a version already seen.
CREATE TABLE IF NOT EXISTS employee_state (
    employee_id  INTEGER PRIMARY KEY,
    version      INTEGER,
    full_name    VARCHAR,
    title        VARCHAR,
    department   VARCHAR,
    manager_id   INTEGER,
    status       VARCHAR
);

CREATE TABLE IF NOT EXISTS employee_directory (
    employee_id  INTEGER PRIMARY KEY,
    full_name    VARCHAR,
    title        VARCHAR,
    department   VARCHAR,
    manager_id   INTEGER,
    status       VARCHAR
);

CREATE OR REPLACE TEMP TABLE newest AS
SELECT employee_id, version, full_name, title, department, manager_id, status
FROM incoming.employee_changes
QUALIFY row_number() OVER (PARTITION BY employee_id ORDER BY version DESC) = 1;

-- The key lists the lookups below join against are never empty (an empty one looks up 0):
-- DuckDB pushes the keys of a join's small side into the scan of the stored table, but from an
-- empty side it pushes nothing and reads the table whole. The deletes also require the key to
-- be a winner's, so that a real key 0 is never deleted by mistake.
CREATE OR REPLACE TEMP TABLE batch_keys AS
SELECT employee_id FROM newest UNION ALL SELECT coalesce(min(employee_id), 0) FROM newest;

CREATE OR REPLACE TEMP TABLE stored AS
SELECT s.employee_id, s.version FROM employee_state AS s WHERE s.employee_id IN (SELECT employee_id FROM batch_keys);

CREATE OR REPLACE TEMP TABLE winners AS
SELECT n.* FROM newest AS n LEFT JOIN stored AS s USING (employee_id)
WHERE s.version IS NULL OR n.version > s.version;

CREATE OR REPLACE TEMP TABLE winner_keys AS
SELECT employee_id FROM winners UNION ALL SELECT coalesce(min(employee_id), 0) FROM winners;

BEGIN TRANSACTION;

DELETE FROM employee_state
WHERE employee_id IN (SELECT employee_id FROM winner_keys) AND employee_id IN (SELECT employee_id FROM winners);

INSERT INTO employee_state SELECT employee_id, version, full_name, title, department, manager_id, status FROM winners;

DELETE FROM employee_directory
WHERE employee_id IN (SELECT employee_id FROM winner_keys) AND employee_id IN (SELECT employee_id FROM winners);

INSERT INTO employee_directory
SELECT employee_id, full_name, title, department, manager_id, status
FROM winners
WHERE status <> 'terminated';

COMMIT;
