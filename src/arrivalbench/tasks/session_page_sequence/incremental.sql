-- Incremental: the view history is keyed on the view id and indexed on the session, and
-- session_last keeps each session's latest view and its number of views. A run looks up only
-- the stored ids its batch carries and stores the views not seen before. A session whose new
-- views all come after its latest one is numbered on from that latest view alone; only a
-- session with a late view is renumbered from its history (index scan), and then every stored
-- view after the first late one is replaced too (its step moves). One transaction, so a retried
-- batch changes nothing twice.
-- DuckDB reads the whole stored side of a join whose other side ends up empty, so the history
-- and session_last each hold one sentinel row that every lookup also asks for, and rows of the
-- target are deleted only when they are known to be stored.
BEGIN TRANSACTION;

-- Created with their sentinel rows, once (the statements do nothing when the tables exist).
CREATE TABLE IF NOT EXISTS view_history AS
SELECT ''::VARCHAR AS view_id, NULL::VARCHAR AS session_id, NULL::VARCHAR AS page,
       NULL::TIMESTAMP AS viewed_at;
CREATE UNIQUE INDEX IF NOT EXISTS view_history_id ON view_history (view_id);
CREATE INDEX IF NOT EXISTS view_history_session ON view_history (session_id);

CREATE TABLE IF NOT EXISTS session_last AS
SELECT ''::VARCHAR AS session_id, NULL::VARCHAR AS view_id, NULL::VARCHAR AS page,
       NULL::TIMESTAMP AS viewed_at, NULL::BIGINT AS step;
CREATE UNIQUE INDEX IF NOT EXISTS session_last_id ON session_last (session_id);

CREATE TABLE IF NOT EXISTS session_steps (
    view_id    VARCHAR PRIMARY KEY,
    session_id VARCHAR,
    page       VARCHAR,
    viewed_at  TIMESTAMP,
    step       BIGINT,
    prev_page  VARCHAR
);

CREATE OR REPLACE TEMP TABLE known AS
SELECT h.view_id FROM view_history AS h
WHERE h.view_id IN (SELECT view_id FROM incoming.page_views UNION ALL SELECT '');

CREATE OR REPLACE TEMP TABLE fresh AS
SELECT DISTINCT ON (view_id) view_id, session_id, page, viewed_at
FROM incoming.page_views
WHERE view_id NOT IN (SELECT view_id FROM known)
ORDER BY view_id;

INSERT INTO view_history SELECT * FROM fresh;

CREATE OR REPLACE TEMP TABLE last AS
SELECT l.* FROM session_last AS l
WHERE l.session_id IN (SELECT session_id FROM fresh UNION ALL SELECT '');
DELETE FROM last WHERE session_id = '';

-- Sessions with a new view before their latest stored one.
CREATE OR REPLACE TEMP TABLE late AS
SELECT DISTINCT f.session_id FROM fresh AS f JOIN last AS l USING (session_id)
WHERE (f.viewed_at, f.view_id) < (l.viewed_at, l.view_id);

CREATE OR REPLACE TEMP TABLE late_history AS
SELECT h.* FROM view_history AS h
WHERE h.session_id IN (SELECT session_id FROM late UNION ALL SELECT '');

CREATE OR REPLACE TEMP TABLE steps AS
WITH base AS (
    -- a late session: its whole history; any other: its latest stored view and the new ones
    SELECT view_id, session_id, page, viewed_at, 0 AS offset_step, false AS stored_only
    FROM fresh WHERE session_id NOT IN (SELECT session_id FROM late)
    UNION ALL
    SELECT view_id, session_id, page, viewed_at, step - 1, true
    FROM last WHERE session_id NOT IN (SELECT session_id FROM late)
    UNION ALL
    SELECT view_id, session_id, page, viewed_at, 0, false FROM late_history
), numbered AS (
    SELECT
        *,
        row_number() OVER w + max(offset_step) OVER (PARTITION BY session_id) AS step,
        lag(page) OVER w AS prev_page,
        view_id IN (SELECT view_id FROM fresh) AS is_fresh
    FROM base
    WINDOW w AS (PARTITION BY session_id ORDER BY viewed_at, view_id)
), first_fresh AS (
    SELECT session_id, min((viewed_at, view_id)) AS at FROM numbered WHERE is_fresh
    GROUP BY session_id
)
SELECT n.* FROM numbered AS n JOIN first_fresh AS f USING (session_id)
WHERE NOT n.stored_only AND (n.viewed_at, n.view_id) >= f.at;

CREATE OR REPLACE TEMP TABLE replaced AS
SELECT view_id FROM steps WHERE NOT is_fresh;

DELETE FROM session_steps
WHERE view_id IN (SELECT view_id FROM replaced UNION ALL SELECT '');

INSERT INTO session_steps
SELECT view_id, session_id, page, viewed_at, step, prev_page FROM steps;

CREATE OR REPLACE TEMP TABLE new_last AS
SELECT session_id, arg_max_null(view_id, (viewed_at, view_id)) AS view_id,
       arg_max_null(page, (viewed_at, view_id)) AS page, max(viewed_at) AS viewed_at,
       max(step) AS step
FROM (SELECT session_id, view_id, page, viewed_at, step FROM steps
      UNION ALL SELECT session_id, view_id, page, viewed_at, step FROM last)
GROUP BY session_id;

-- The sentinel goes with the stored rows (never an empty lookup) and comes back.
DELETE FROM session_last WHERE session_id IN (SELECT session_id FROM last UNION ALL SELECT '');

INSERT INTO session_last
SELECT * FROM new_last UNION ALL SELECT '', NULL, NULL, NULL, NULL;

DROP TABLE new_last;
DROP TABLE replaced;
DROP TABLE steps;
DROP TABLE late_history;
DROP TABLE late;
DROP TABLE last;
DROP TABLE fresh;
DROP TABLE known;

COMMIT;
