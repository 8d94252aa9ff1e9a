-- Stage the batch's views that the history does not hold yet (anti-join), once each; then
-- number every session again from the history.
CREATE TABLE IF NOT EXISTS view_history (
    view_id    VARCHAR,
    session_id VARCHAR,
    page       VARCHAR,
    viewed_at  TIMESTAMP
);

INSERT INTO view_history
SELECT DISTINCT ON (v.view_id) v.view_id, v.session_id, v.page, v.viewed_at
FROM incoming.page_views AS v
WHERE NOT EXISTS (SELECT 1 FROM view_history AS h WHERE h.view_id = v.view_id)
ORDER BY v.view_id;

DROP TABLE IF EXISTS session_steps;

CREATE TABLE session_steps AS
SELECT
    view_id,
    session_id,
    page,
    viewed_at,
    row_number() OVER w AS step,
    lag(page) OVER w    AS prev_page
FROM view_history
WINDOW w AS (PARTITION BY session_id ORDER BY viewed_at, view_id);
