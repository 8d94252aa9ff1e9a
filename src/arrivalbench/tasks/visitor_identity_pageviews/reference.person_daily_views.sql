-- Views are attributed through the identity map over every link (the same grouping as
-- reference.identity_map.sql), then counted per person and calendar day.
WITH RECURSIVE
edges AS (
    SELECT id_a AS src, id_b AS dst FROM identity_links
    UNION
    SELECT id_b, id_a FROM identity_links
),
ids AS (
    SELECT id_a AS id FROM identity_links
    UNION SELECT id_b FROM identity_links
    UNION SELECT visitor_id FROM page_views WHERE visitor_id IS NOT NULL
),
reach (id, other) AS (
    SELECT id, id FROM ids
    UNION
    SELECT r.id, e.dst FROM reach AS r JOIN edges AS e ON e.src = r.other
),
identity_map AS (
    SELECT id, min(other) AS person_id FROM reach GROUP BY id
),
daily AS (
    SELECT m.person_id, CAST(v.viewed_at AS DATE) AS day, count(*) AS views,
           count(DISTINCT v.page) AS pages
    FROM page_views AS v JOIN identity_map AS m ON m.id = v.visitor_id
    GROUP BY m.person_id, CAST(v.viewed_at AS DATE)
)
SELECT person_id, day, views, pages,
       row_number() OVER (PARTITION BY person_id ORDER BY day) AS day_number
FROM daily
