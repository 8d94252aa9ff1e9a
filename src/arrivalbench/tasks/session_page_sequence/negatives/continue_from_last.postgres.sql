-- Add the views the table does not hold yet; each session continues from its last numbered
-- view (its step and page).
CREATE TABLE IF NOT EXISTS session_steps (
    view_id    VARCHAR PRIMARY KEY,
    session_id VARCHAR,
    page       VARCHAR,
    viewed_at  TIMESTAMP,
    step       BIGINT,
    prev_page  VARCHAR
);

INSERT INTO session_steps
WITH fresh AS (
    SELECT DISTINCT ON (view_id) view_id, session_id, page, viewed_at
    FROM incoming.page_views
    WHERE view_id NOT IN (SELECT view_id FROM session_steps)
    ORDER BY view_id
),
last_view AS (
    SELECT session_id, step, page
    FROM (
        SELECT *, row_number() OVER (PARTITION BY session_id
                                     ORDER BY viewed_at DESC NULLS LAST,
                                              view_id DESC NULLS LAST) AS rn
        FROM session_steps
    ) AS s
    WHERE rn = 1
)
SELECT
    f.view_id,
    f.session_id,
    f.page,
    f.viewed_at,
    COALESCE(l.step, 0) + row_number() OVER w,
    CASE WHEN row_number() OVER w = 1 THEN l.page ELSE lag(f.page) OVER w END
FROM fresh AS f
LEFT JOIN last_view AS l USING (session_id)
WINDOW w AS (PARTITION BY f.session_id ORDER BY f.viewed_at, f.view_id);
