-- Land every delivered hit; rebuild the sessions from the landing table on every run.
CREATE TABLE IF NOT EXISTS hits_landing (
    hit_id     VARCHAR,
    visitor_id VARCHAR,
    page       VARCHAR,
    hit_at     TIMESTAMP
);

INSERT INTO hits_landing
SELECT hit_id, visitor_id, page, hit_at FROM incoming.page_hits;

CREATE OR REPLACE TABLE visitor_sessions AS
WITH hits AS (
    SELECT * FROM hits_landing
),
ordered_hits AS (
    SELECT
        *,
        CASE WHEN hit_at - lag(hit_at) OVER w <= INTERVAL 30 MINUTE THEN 0 ELSE 1 END AS starts
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
    first(page ORDER BY hit_at, hit_id)      AS landing_page,
    last(page ORDER BY hit_at, hit_id)      AS exit_page
FROM numbered
GROUP BY visitor_id, session_no;
