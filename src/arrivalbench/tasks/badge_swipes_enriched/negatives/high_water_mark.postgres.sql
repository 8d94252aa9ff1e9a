-- Keep the delivered swipes from the newest swipe time already kept on, and rebuild the target
-- from the history, one row per swipe id.
CREATE TABLE IF NOT EXISTS swipe_history (
    swipe_id    BIGINT,
    badge_id    TEXT,
    employee_id INTEGER,
    door_id     TEXT,
    direction   TEXT,
    swiped_at   TIMESTAMP
);

INSERT INTO swipe_history
SELECT swipe_id, badge_id, employee_id, door_id, direction, swiped_at
FROM incoming.badge_swipes
WHERE swiped_at >= (SELECT COALESCE(MAX(swiped_at), TIMESTAMP '1970-01-01') FROM swipe_history);

DROP TABLE IF EXISTS badge_swipes_clean;

CREATE TABLE badge_swipes_clean AS
SELECT DISTINCT ON (swipe_id)
    swipe_id,
    employee_id,
    split_part(door_id, '-', 1)                       AS building,
    CAST(split_part(door_id, '-', 2) AS INTEGER)      AS floor,
    direction,
    swiped_at,
    CAST(swiped_at - INTERVAL '4 hours' AS DATE)         AS work_date
FROM swipe_history
ORDER BY swipe_id;
