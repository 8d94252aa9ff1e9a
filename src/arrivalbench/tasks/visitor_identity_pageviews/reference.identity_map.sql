-- The person of an id is the smallest id it reaches through links taken in both directions.
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
)
SELECT id, min(other) AS person_id FROM reach GROUP BY id
