SELECT
    CAST(swipe_id AS BIGINT) AS swipe_id,
    CAST(employee_id AS INTEGER) AS employee_id,
    CAST(split_part(door_id, '-', 1) AS VARCHAR) AS building,
    CAST(split_part(door_id, '-', 2) AS INTEGER) AS floor,
    CAST(direction AS VARCHAR) AS direction,
    CAST(swiped_at AS TIMESTAMP) AS swiped_at,
    CAST(CAST(swiped_at - INTERVAL 4 HOUR AS DATE) AS DATE) AS work_date
FROM badge_swipes
