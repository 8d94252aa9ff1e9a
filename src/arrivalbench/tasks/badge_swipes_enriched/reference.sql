SELECT
    swipe_id,
    employee_id,
    split_part(door_id, '-', 1)                       AS building,
    CAST(split_part(door_id, '-', 2) AS INTEGER)      AS floor,
    direction,
    swiped_at,
    CAST(swiped_at - INTERVAL 4 HOUR AS DATE)         AS work_date
FROM badge_swipes
