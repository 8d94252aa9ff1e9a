-- Land the hits at or after the newest hit landed so far; rebuild the sessions from the
-- landing table on every run, each hit id once.
CREATE TABLE IF NOT EXISTS hits_landing (
    hit_id     VARCHAR,
    visitor_id VARCHAR,
    page       VARCHAR,
    hit_at     TIMESTAMP
);

INSERT INTO hits_landing
SELECT hit_id, visitor_id, page, hit_at FROM incoming.page_hits
WHERE hit_at >= (SELECT COALESCE(max(hit_at), TIMESTAMP '1970-01-01') FROM hits_landing);

DROP TABLE IF EXISTS visitor_sessions;

CREATE TABLE visitor_sessions AS
WITH hits AS (
    SELECT DISTINCT ON (hit_id) * FROM hits_landing ORDER BY hit_id
),
ordered_hits AS (
    SELECT
        *,
        CASE WHEN hit_at - lag(hit_at) OVER w <= INTERVAL '30 minutes' THEN 0 ELSE 1 END AS starts
    FROM hits
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
    min(hit_at)                          AS session_start,
    max(hit_at)                          AS session_end,
    count(*)                             AS pageviews,
    (array_agg(page ORDER BY hit_at, hit_id))[1]
                                         AS landing_page,
    (array_agg(page ORDER BY hit_at DESC, hit_id DESC))[1]
                                         AS exit_page
FROM numbered
GROUP BY visitor_id, session_no;
