-- Incremental load by view time: take the events at or after the newest view already loaded,
-- skipping event ids that are already in the table.
CREATE TABLE IF NOT EXISTS page_views (
    event_id      VARCHAR,
    session_id    VARCHAR,
    user_id       BIGINT,
    page_path     VARCHAR,
    referrer_host VARCHAR,
    view_date     DATE,
    viewed_at     TIMESTAMP
);

INSERT INTO page_views (event_id, session_id, user_id, page_path, referrer_host, view_date, viewed_at)
SELECT DISTINCT
    e.event_id,
    e.session_id,
    e.user_id,
    COALESCE(
        NULLIF(rtrim(lower(substring(e.url from '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*([^?#]*)')), '/'), ''),
        '/'),
    NULLIF(
        regexp_replace(lower(substring(e.referrer from '^[A-Za-z][A-Za-z0-9+.-]*://([^/?#:]*)')), '^www\.', ''),
        ''),
    CAST(e.viewed_at AS DATE),
    e.viewed_at
FROM incoming.page_events AS e
WHERE e.viewed_at >= (SELECT COALESCE(MAX(viewed_at), TIMESTAMP '1970-01-01') FROM page_views)
  AND e.event_id NOT IN (SELECT event_id FROM page_views);
