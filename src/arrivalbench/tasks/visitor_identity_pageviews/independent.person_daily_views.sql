WITH RECURSIVE
-- a record is identified by its key; repeated deliveries count once
links AS (
    SELECT DISTINCT link_id, id_a, id_b FROM identity_links
),
views AS (
    SELECT DISTINCT view_id, visitor_id, page, viewed_at FROM page_views
),
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
-- connected components by min-label propagation (current grouping, regardless of link time)
components(id, person_id) USING KEY (id) AS (
    SELECT id, id FROM all_ids
    UNION
    SELECT e.dst, min(c.person_id)
    FROM components AS c
    JOIN edges AS e ON e.src = c.id
    JOIN recurring.components AS r ON r.id = e.dst
    GROUP BY e.dst, r.person_id
    HAVING min(c.person_id) < r.person_id
),
-- views with an empty visitor id belong to no person; a view without a time has no day
person_views AS (
    SELECT c.person_id, CAST(v.viewed_at AS DATE) AS day, v.view_id, v.page
    FROM views AS v
    JOIN components AS c ON c.id = v.visitor_id
    WHERE trim(v.visitor_id) <> '' AND v.viewed_at IS NOT NULL
),
daily AS (
    SELECT person_id, day, count(*) AS views, count(DISTINCT page) AS pages
    FROM person_views
    GROUP BY person_id, day
)
SELECT
    CAST(person_id AS VARCHAR) AS person_id,
    CAST(day AS DATE) AS day,
    CAST(views AS BIGINT) AS views,
    CAST(pages AS BIGINT) AS pages,
    CAST(row_number() OVER (PARTITION BY person_id ORDER BY day) AS BIGINT) AS day_number
FROM daily
