-- Every delivered link and view is kept in a history, one row per id; both tables are then
-- rebuilt from the histories in one transaction: the person of an id is the smallest id it
-- reaches through links taken in both directions, and views are counted through that map.
BEGIN TRANSACTION;

CREATE TABLE IF NOT EXISTS link_history (
    link_id   BIGINT PRIMARY KEY,
    id_a      VARCHAR,
    id_b      VARCHAR,
    linked_at TIMESTAMP
);

CREATE TABLE IF NOT EXISTS view_history (
    view_id    BIGINT PRIMARY KEY,
    visitor_id VARCHAR,
    page       VARCHAR,
    viewed_at  TIMESTAMP
);

INSERT INTO link_history
SELECT DISTINCT link_id, id_a, id_b, linked_at FROM incoming.identity_links
ON CONFLICT DO NOTHING;

INSERT INTO view_history
SELECT DISTINCT view_id, visitor_id, page, viewed_at FROM incoming.page_views
ON CONFLICT DO NOTHING;

DROP TABLE IF EXISTS identity_map;

CREATE TABLE identity_map AS
WITH RECURSIVE
edges AS (
    SELECT id_a AS src, id_b AS dst FROM link_history
    UNION
    SELECT id_b, id_a FROM link_history
),
ids AS (
    SELECT id_a AS id FROM link_history
    UNION SELECT id_b FROM link_history
    UNION SELECT visitor_id FROM view_history WHERE visitor_id IS NOT NULL
),
reach (id, other) AS (
    SELECT id, id FROM ids
    UNION
    SELECT r.id, e.dst FROM reach AS r JOIN edges AS e ON e.src = r.other
)
SELECT id, min(other) AS person_id FROM reach GROUP BY id;

DROP TABLE IF EXISTS person_daily_views;

CREATE TABLE person_daily_views AS
SELECT person_id, day, views, pages,
       row_number() OVER (PARTITION BY person_id ORDER BY day) AS day_number
FROM (
    SELECT m.person_id, CAST(v.viewed_at AS DATE) AS day, count(*) AS views,
           count(DISTINCT v.page) AS pages
    FROM view_history AS v JOIN identity_map AS m ON m.id = v.visitor_id
    GROUP BY m.person_id, CAST(v.viewed_at AS DATE)
) AS daily;

COMMIT;
