WITH ordered AS (
    SELECT
        hit_id, visitor_id, page, hit_at,
        lag(hit_at) OVER (PARTITION BY visitor_id ORDER BY hit_at, hit_id) AS prev_hit_at
    FROM page_hits
),
flagged AS (
    SELECT *,
        CASE WHEN prev_hit_at IS NULL OR hit_at - prev_hit_at > INTERVAL 30 MINUTE THEN 1 ELSE 0 END AS is_new
    FROM ordered
),
numbered AS (
    SELECT *,
        sum(is_new) OVER (PARTITION BY visitor_id ORDER BY hit_at, hit_id
                          ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS session_no,
        row_number() OVER (PARTITION BY visitor_id ORDER BY hit_at, hit_id) AS rn
    FROM flagged
),
ranked AS (
    SELECT *,
        row_number() OVER (PARTITION BY visitor_id, session_no ORDER BY hit_at ASC, hit_id ASC) AS rn_first,
        row_number() OVER (PARTITION BY visitor_id, session_no ORDER BY hit_at DESC, hit_id DESC) AS rn_last
    FROM numbered
)
SELECT
    CAST(visitor_id AS VARCHAR) AS visitor_id,
    CAST(min(hit_at) AS TIMESTAMP) AS session_start,
    CAST(max(hit_at) AS TIMESTAMP) AS session_end,
    CAST(count(*) AS BIGINT) AS pageviews,
    CAST(max(CASE WHEN rn_first = 1 THEN page END) AS VARCHAR) AS landing_page,
    CAST(max(CASE WHEN rn_last = 1 THEN page END) AS VARCHAR) AS exit_page
FROM ranked
GROUP BY visitor_id, session_no
ORDER BY visitor_id, session_start
