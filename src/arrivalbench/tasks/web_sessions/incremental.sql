-- Incremental: the hit history is keyed on the hit id and indexed on the visitor. A run looks
-- up only the stored ids its batch carries, stores the hits not seen before, reads the hits of
-- just the visitors those belong to (index scans), sessionizes those visitors again and replaces
-- just their sessions; one transaction, so a retried batch changes nothing twice.
-- DuckDB reads the whole stored side of a join whose other side ends up empty, so the history
-- holds one sentinel row (hit '', no visitor) that every id lookup also asks for, and a
-- visitor's sessions are deleted only when its earlier hits show it has some.
BEGIN TRANSACTION;

-- Created with its sentinel row, once (the statement does nothing when the table exists).
CREATE TABLE IF NOT EXISTS hit_history AS
SELECT ''::VARCHAR AS hit_id, NULL::VARCHAR AS visitor_id, NULL::VARCHAR AS page,
       NULL::TIMESTAMP AS hit_at;
CREATE UNIQUE INDEX IF NOT EXISTS hit_history_id ON hit_history (hit_id);
CREATE INDEX IF NOT EXISTS hit_history_visitor ON hit_history (visitor_id);

CREATE TABLE IF NOT EXISTS visitor_sessions (
    visitor_id    VARCHAR,
    session_start TIMESTAMP,
    session_end   TIMESTAMP,
    pageviews     BIGINT,
    landing_page  VARCHAR,
    exit_page     VARCHAR
);
CREATE INDEX IF NOT EXISTS visitor_sessions_visitor ON visitor_sessions (visitor_id);

CREATE OR REPLACE TEMP TABLE known AS
SELECT h.hit_id FROM hit_history AS h
WHERE h.hit_id IN (SELECT hit_id FROM incoming.page_hits UNION ALL SELECT '');

CREATE OR REPLACE TEMP TABLE fresh AS
SELECT DISTINCT ON (hit_id) hit_id, visitor_id, page, hit_at
FROM incoming.page_hits
WHERE hit_id NOT IN (SELECT hit_id FROM known)
ORDER BY hit_id;

INSERT INTO hit_history SELECT * FROM fresh;

CREATE OR REPLACE TEMP TABLE touched AS
SELECT h.* FROM hit_history AS h
WHERE h.visitor_id IN (SELECT visitor_id FROM fresh UNION ALL SELECT '');

CREATE OR REPLACE TEMP TABLE stored AS
SELECT DISTINCT visitor_id FROM touched WHERE hit_id NOT IN (SELECT hit_id FROM fresh);

DELETE FROM visitor_sessions
WHERE visitor_id IN (SELECT visitor_id FROM stored UNION ALL SELECT '');

INSERT INTO visitor_sessions
WITH ordered_hits AS (
    SELECT
        *,
        CASE WHEN hit_at - lag(hit_at) OVER w <= INTERVAL 30 MINUTE THEN 0 ELSE 1 END AS starts
    FROM touched
    WINDOW w AS (PARTITION BY visitor_id ORDER BY hit_at, hit_id)
),
numbered AS (
    SELECT
        *,
        sum(starts) OVER (PARTITION BY visitor_id ORDER BY hit_at, hit_id
                          ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS session_no
    FROM ordered_hits
)
SELECT
    visitor_id,
    min(hit_at),
    max(hit_at),
    count(*),
    first(page ORDER BY hit_at, hit_id),
    last(page ORDER BY hit_at, hit_id)
FROM numbered
GROUP BY visitor_id, session_no;

DROP TABLE stored;
DROP TABLE touched;
DROP TABLE fresh;
DROP TABLE known;

COMMIT;
