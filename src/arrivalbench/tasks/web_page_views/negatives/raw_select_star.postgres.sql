-- Land a raw copy of the tag's events (same columns as the feed), each event id once, then
-- rebuild the page-view table from the raw copy.
CREATE TABLE IF NOT EXISTS page_events_raw AS
SELECT * FROM incoming.page_events LIMIT 0;

INSERT INTO page_events_raw
SELECT DISTINCT *
FROM incoming.page_events
WHERE event_id NOT IN (SELECT event_id FROM page_events_raw);

DROP TABLE IF EXISTS page_views;

CREATE TABLE page_views AS
SELECT
    event_id,
    session_id,
    user_id,
    COALESCE(
        NULLIF(rtrim(lower(substring(url from '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*([^?#]*)')), '/'), ''),
        '/')                 AS page_path,
    NULLIF(
        regexp_replace(lower(substring(referrer from '^[A-Za-z][A-Za-z0-9+.-]*://([^/?#:]*)')), '^www\.', ''),
        '')                  AS referrer_host,
    CAST(viewed_at AS DATE)  AS view_date,
    viewed_at
FROM page_events_raw;
