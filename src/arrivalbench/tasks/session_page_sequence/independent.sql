SELECT
    CAST(view_id AS VARCHAR) AS view_id,
    CAST(session_id AS VARCHAR) AS session_id,
    CAST(page AS VARCHAR) AS page,
    CAST(viewed_at AS TIMESTAMP) AS viewed_at,
    CAST(row_number() OVER w AS BIGINT) AS step,
    CAST(lag(page) OVER w AS VARCHAR) AS prev_page
FROM page_views
WINDOW w AS (PARTITION BY session_id ORDER BY viewed_at ASC, view_id ASC)
ORDER BY session_id, step
