WITH cur AS (
    SELECT *
    FROM ticket_changes
    QUALIFY row_number() OVER (PARTITION BY ticket_id ORDER BY version DESC, updated_at DESC, change_id DESC) = 1
)
SELECT
    CAST(ticket_id AS BIGINT) AS ticket_id,
    CAST(status AS VARCHAR) AS status,
    CAST(priority AS VARCHAR) AS priority,
    CAST(queue AS VARCHAR) AS queue,
    CAST(assignee_id AS INTEGER) AS assignee_id,
    CAST(subject AS VARCHAR) AS subject,
    CAST(updated_at AS TIMESTAMP) AS updated_at
FROM cur
WHERE op IS DISTINCT FROM 'delete'
ORDER BY ticket_id
