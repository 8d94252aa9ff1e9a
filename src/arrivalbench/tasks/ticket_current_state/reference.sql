SELECT ticket_id, status, priority, queue, assignee_id, subject, updated_at
FROM ticket_changes
QUALIFY row_number() OVER (PARTITION BY ticket_id ORDER BY version DESC) = 1
    AND op = 'upsert'
