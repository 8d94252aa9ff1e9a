SELECT
    CAST(employee_id AS INTEGER) AS employee_id,
    CAST(version AS INTEGER) AS version,
    CAST(department AS VARCHAR) AS department,
    CAST(cost_center AS VARCHAR) AS cost_center,
    CAST(effective_at AS TIMESTAMP) AS valid_from,
    CAST(lead(effective_at) OVER w AS TIMESTAMP) AS valid_to,
    CAST(row_number() OVER (PARTITION BY employee_id ORDER BY version DESC) = 1 AS BOOLEAN) AS is_current
FROM department_assignments
WINDOW w AS (PARTITION BY employee_id ORDER BY version)
ORDER BY employee_id, version
