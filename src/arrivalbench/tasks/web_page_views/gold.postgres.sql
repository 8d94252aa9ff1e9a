-- The target is the event history itself: each run appends the events of the batch whose
-- event id is not in the table yet (anti-join), one row per event id.
CREATE TABLE IF NOT EXISTS page_views (
    event_id      VARCHAR PRIMARY KEY,
    session_id    VARCHAR,
    user_id       BIGINT,
    page_path     VARCHAR,
    referrer_host VARCHAR,
    view_date     DATE,
    viewed_at     TIMESTAMP
);

-- substring(x from pattern) is DuckDB's regexp_extract(x, pattern, 1), but NULL where that
-- gives '' (no match): the same once NULLIF and COALESCE have applied.
INSERT INTO page_views (event_id, session_id, user_id, page_path, referrer_host, view_date, viewed_at)
SELECT DISTINCT ON (e.event_id)
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
WHERE NOT EXISTS (SELECT 1 FROM page_views AS p WHERE p.event_id = e.event_id)
ORDER BY e.event_id, e.viewed_at;
