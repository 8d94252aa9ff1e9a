-- One row per page-view event, with the derived columns.
SELECT
    CAST(event_id AS VARCHAR)    AS event_id,
    CAST(session_id AS VARCHAR)  AS session_id,
    CAST(user_id AS BIGINT)      AS user_id,
    COALESCE(
        NULLIF(rtrim(lower(regexp_extract(url, '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*([^?#]*)', 1)), '/'), ''),
        '/')                     AS page_path,
    NULLIF(
        regexp_replace(lower(regexp_extract(referrer, '^[A-Za-z][A-Za-z0-9+.-]*://([^/?#:]*)', 1)), '^www\.', ''),
        '')                      AS referrer_host,
    CAST(viewed_at AS DATE)      AS view_date,
    CAST(viewed_at AS TIMESTAMP) AS viewed_at
FROM page_events
