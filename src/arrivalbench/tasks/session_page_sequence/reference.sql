SELECT
    view_id,
    session_id,
    page,
    viewed_at,
    row_number() OVER w AS step,
    lag(page) OVER w    AS prev_page
FROM page_views
WINDOW w AS (PARTITION BY session_id ORDER BY viewed_at, view_id)
