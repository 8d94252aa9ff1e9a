SELECT
    employee_id,
    version,
    department,
    cost_center,
    effective_at                                    AS valid_from,
    lead(effective_at) OVER w                       AS valid_to,
    lead(effective_at) OVER w IS NULL               AS is_current
FROM department_assignments
WINDOW w AS (PARTITION BY employee_id ORDER BY version)
