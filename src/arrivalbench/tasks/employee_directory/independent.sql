WITH cur AS (
    SELECT *
    FROM employee_changes
    QUALIFY row_number() OVER (PARTITION BY employee_id ORDER BY version DESC, changed_at DESC, change_id DESC) = 1
)
SELECT
    CAST(employee_id AS INTEGER) AS employee_id,
    CAST(full_name AS VARCHAR) AS full_name,
    CAST(title AS VARCHAR) AS title,
    CAST(department AS VARCHAR) AS department,
    CAST(manager_id AS INTEGER) AS manager_id,
    CAST(status AS VARCHAR) AS status
FROM cur
WHERE status IS DISTINCT FROM 'terminated'
ORDER BY employee_id
