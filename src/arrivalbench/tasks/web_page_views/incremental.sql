-- Incremental: the target is the event history itself, keyed on the event id; each run offers
-- the batch's events (one row per event id) and the primary key drops those already stored, so a
-- run reads only the stored rows whose keys its batch carries.
CREATE TABLE IF NOT EXISTS page_views (
    event_id      VARCHAR PRIMARY KEY,
    session_id    VARCHAR,
    user_id       BIGINT,
    page_path     VARCHAR,
    referrer_host VARCHAR,
    view_date     DATE,
    viewed_at     TIMESTAMP
);

INSERT INTO page_views (event_id, session_id, user_id, page_path, referrer_host, view_date, viewed_at)
SELECT
    e.event_id,
    e.session_id,
    e.user_id,
    COALESCE(
        NULLIF(rtrim(lower(regexp_extract(e.url, '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*([^?#]*)', 1)), '/'), ''),
        '/'),
    NULLIF(
        regexp_replace(lower(regexp_extract(e.referrer, '^[A-Za-z][A-Za-z0-9+.-]*://([^/?#:]*)', 1)), '^www\.', ''),
        ''),
    CAST(e.viewed_at AS DATE),
    e.viewed_at
FROM incoming.page_events AS e
QUALIFY row_number() OVER (PARTITION BY e.event_id ORDER BY e.viewed_at) = 1
ON CONFLICT DO NOTHING;
