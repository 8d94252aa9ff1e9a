WITH RECURSIVE
-- a record is identified by its key; repeated deliveries count once
links AS (
    SELECT DISTINCT link_id, id_a, id_b FROM identity_links
),
views AS (
    SELECT DISTINCT view_id, visitor_id FROM page_views
),
-- every id mentioned by a link (either side, self-links included) or as a non-empty visitor id
all_ids AS (
    SELECT id_a AS id FROM links WHERE trim(id_a) <> ''
    UNION
    SELECT id_b FROM links WHERE trim(id_b) <> ''
    UNION
    SELECT visitor_id FROM views WHERE trim(visitor_id) <> ''
),
-- undirected edges; a self-link only says the id exists, so it adds no edge
edges AS (
    SELECT id_a AS src, id_b AS dst FROM links
    WHERE trim(id_a) <> '' AND trim(id_b) <> '' AND id_a <> id_b
    UNION
    SELECT id_b, id_a FROM links
    WHERE trim(id_a) <> '' AND trim(id_b) <> '' AND id_a <> id_b
),
-- connected components by min-label propagation: each id ends with the smallest
-- (binary string order) id reachable from it
components(id, person_id) USING KEY (id) AS (
    SELECT id, id FROM all_ids
    UNION
    SELECT e.dst, min(c.person_id)
    FROM components AS c
    JOIN edges AS e ON e.src = c.id
    JOIN recurring.components AS r ON r.id = e.dst
    GROUP BY e.dst, r.person_id
    HAVING min(c.person_id) < r.person_id
)
SELECT CAST(id AS VARCHAR) AS id, CAST(person_id AS VARCHAR) AS person_id
FROM components
