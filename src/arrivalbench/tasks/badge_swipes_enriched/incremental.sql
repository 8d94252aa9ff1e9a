-- Incremental: the target is keyed on the swipe id, and each run inserts the batch's swipes
-- (one row per id) that the target does not hold yet. The only stored rows it reads are
-- those whose ids the batch carries. One write: a retried batch landed or did not.
CREATE TABLE IF NOT EXISTS badge_swipes_clean (
    swipe_id    BIGINT PRIMARY KEY,
    employee_id INTEGER,
    building    VARCHAR,
    floor       INTEGER,
    direction   VARCHAR,
    swiped_at   TIMESTAMP,
    work_date   DATE
);

-- The batch's ids, never empty (an empty batch looks up id 0): DuckDB pushes the ids of the
-- lookup's batch side into the scan of the stored table, but from an empty side it pushes
-- nothing and would read the table whole.
CREATE OR REPLACE TEMP TABLE batch_ids AS
SELECT swipe_id FROM incoming.badge_swipes UNION ALL SELECT coalesce(min(swipe_id), 0) FROM incoming.badge_swipes;

CREATE OR REPLACE TEMP TABLE known AS
SELECT s.swipe_id FROM badge_swipes_clean AS s WHERE s.swipe_id IN (SELECT swipe_id FROM batch_ids);

INSERT INTO badge_swipes_clean
SELECT
    swipe_id,
    employee_id,
    split_part(door_id, '-', 1),
    CAST(split_part(door_id, '-', 2) AS INTEGER),
    direction,
    swiped_at,
    CAST(swiped_at - INTERVAL 4 HOUR AS DATE)
FROM incoming.badge_swipes
WHERE swipe_id NOT IN (SELECT swipe_id FROM known)
QUALIFY row_number() OVER (PARTITION BY swipe_id ORDER BY swiped_at) = 1;
