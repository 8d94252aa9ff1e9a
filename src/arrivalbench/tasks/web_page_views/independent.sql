WITH p AS (
    SELECT *,
           lower(regexp_extract(url, '^[A-Za-z][A-Za-z0-9+.\-]*://[^/?#]*([^?#]*)', 1)) AS raw_path,
           -- Any scheme: the ticket names 'android-app://' referrers as having a host too.
           lower(regexp_extract(referrer, '^[A-Za-z][A-Za-z0-9+.\-]*://(?:[^/?#@]*@)?([^/?#:]*)', 1)) AS raw_host
    FROM page_events
)
SELECT
    CAST(event_id AS VARCHAR) AS event_id,
    CAST(session_id AS VARCHAR) AS session_id,
    CAST(user_id AS BIGINT) AS user_id,
    CAST(CASE WHEN rtrim(raw_path, '/') = '' THEN '/' ELSE rtrim(raw_path, '/') END AS VARCHAR) AS page_path,
    CAST(CASE WHEN raw_host IS NULL OR raw_host = '' THEN NULL
              WHEN starts_with(raw_host, 'www.') THEN substr(raw_host, 5)
              ELSE raw_host END AS VARCHAR) AS referrer_host,
    CAST(viewed_at AS DATE) AS view_date,
    CAST(viewed_at AS TIMESTAMP) AS viewed_at
FROM p
ORDER BY viewed_at, event_id
