SELECT employee_id, full_name, title, department, manager_id, status
FROM employee_changes
QUALIFY row_number() OVER (PARTITION BY employee_id ORDER BY version DESC) = 1
    AND status <> 'terminated'
