-- Append the events of each delivery to the page-view table.
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
SELECT
    event_id,
    session_id,
    user_id,
    COALESCE(
        NULLIF(rtrim(lower(substring(url from '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*([^?#]*)')), '/'), ''),
        '/'),
    NULLIF(
        regexp_replace(lower(substring(referrer from '^[A-Za-z][A-Za-z0-9+.-]*://([^/?#:]*)')), '^www\.', ''),
        ''),
    CAST(viewed_at AS DATE),
    viewed_at
FROM incoming.page_events;
