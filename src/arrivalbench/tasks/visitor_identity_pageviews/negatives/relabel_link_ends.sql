-- Per-id upsert of the map: the ids a batch's links and views mention are grouped over their
-- current people and written with the smallest person they reach; a merged person's page
-- counts move to the merged person and its days are numbered again. Views are counted once by
-- view id; everything commits together.
BEGIN TRANSACTION;

CREATE TABLE IF NOT EXISTS identity_map (
    id        VARCHAR PRIMARY KEY,
    person_id VARCHAR
);

CREATE TABLE IF NOT EXISTS person_daily_views (
    person_id  VARCHAR,
    day        DATE,
    views      BIGINT,
    pages      BIGINT,
    day_number BIGINT
);

CREATE TABLE IF NOT EXISTS person_day_pages (
    person_id VARCHAR,
    day       DATE,
    page      VARCHAR,
    views     BIGINT
);

CREATE TABLE IF NOT EXISTS view_ids (view_id BIGINT PRIMARY KEY);

CREATE OR REPLACE TEMP TABLE batch_view_ids AS
SELECT view_id FROM incoming.page_views
UNION ALL SELECT coalesce(min(view_id), -1) FROM incoming.page_views;

CREATE OR REPLACE TEMP TABLE known_views AS
SELECT v.view_id FROM view_ids AS v WHERE v.view_id IN (SELECT view_id FROM batch_view_ids);

CREATE OR REPLACE TEMP TABLE fresh_views AS
SELECT DISTINCT ON (view_id) view_id, visitor_id, page, CAST(viewed_at AS DATE) AS day
FROM incoming.page_views
WHERE view_id NOT IN (SELECT view_id FROM known_views)
ORDER BY view_id;

CREATE OR REPLACE TEMP TABLE batch_links AS
SELECT DISTINCT id_a, id_b FROM incoming.identity_links;

-- Every id the batch mentions, with its current person (itself when the map does not know it).
CREATE OR REPLACE TEMP TABLE mentioned AS
SELECT id_a AS id FROM batch_links
UNION SELECT id_b FROM batch_links
UNION SELECT visitor_id FROM fresh_views WHERE visitor_id IS NOT NULL;

CREATE OR REPLACE TEMP TABLE mentioned_keys AS
SELECT id FROM mentioned UNION ALL SELECT coalesce(min(id), '') FROM mentioned;

CREATE OR REPLACE TEMP TABLE mapped AS
SELECT m.id, m.person_id FROM identity_map AS m WHERE m.id IN (SELECT id FROM mentioned_keys);

CREATE OR REPLACE TEMP TABLE current_people AS
SELECT t.id, coalesce(m.person_id, t.id) AS person_id
FROM mentioned AS t LEFT JOIN mapped AS m ON m.id = t.id;

-- The batch's links between current people; each person goes to the smallest person it
-- reaches through them.
CREATE OR REPLACE TEMP TABLE person_edges AS
SELECT ca.person_id AS src, cb.person_id AS dst
FROM batch_links AS l
JOIN current_people AS ca ON ca.id = l.id_a
JOIN current_people AS cb ON cb.id = l.id_b;

CREATE OR REPLACE TEMP TABLE moved AS
WITH RECURSIVE
edges AS (SELECT src, dst FROM person_edges UNION SELECT dst, src FROM person_edges),
reach (person_id, other) AS (
    SELECT DISTINCT src, src FROM edges
    UNION
    SELECT r.person_id, e.dst FROM reach AS r JOIN edges AS e ON e.src = r.other
)
SELECT person_id AS old_person, min(other) AS new_person
FROM reach GROUP BY person_id HAVING min(other) < person_id;

CREATE OR REPLACE TEMP TABLE moved_keys AS
SELECT old_person FROM moved UNION ALL SELECT coalesce(min(old_person), '') FROM moved;

-- The map rows to write: the ids the batch mentions, each with its merged person.
CREATE OR REPLACE TEMP TABLE new_map AS
SELECT r.id, coalesce(mv.new_person, r.person_id) AS person_id
FROM current_people AS r
LEFT JOIN moved AS mv ON mv.old_person = r.person_id;

CREATE OR REPLACE TEMP TABLE new_map_keys AS
SELECT id FROM new_map UNION ALL SELECT '';

-- Page counts: the merged people's rows move, the new views add.
CREATE OR REPLACE TEMP TABLE moving_pages AS
SELECT mv.new_person AS person_id, p.day, p.page, p.views
FROM person_day_pages AS p JOIN moved AS mv ON mv.old_person = p.person_id
WHERE p.person_id IN (SELECT old_person FROM moved_keys);

CREATE OR REPLACE TEMP TABLE fresh_pages AS
SELECT m.person_id, v.day, v.page, count(*) AS views
FROM fresh_views AS v JOIN new_map AS m ON m.id = v.visitor_id
GROUP BY m.person_id, v.day, v.page;

CREATE OR REPLACE TEMP TABLE touched_days AS
SELECT DISTINCT person_id, day FROM moving_pages
UNION SELECT DISTINCT person_id, day FROM fresh_pages;

CREATE OR REPLACE TEMP TABLE person_keys AS
SELECT person_id FROM touched_days
UNION SELECT old_person FROM moved
UNION ALL SELECT '';

CREATE OR REPLACE TEMP TABLE day_keys AS
SELECT DISTINCT day FROM touched_days UNION ALL SELECT DATE '1970-01-01';

CREATE OR REPLACE TEMP TABLE staying_pages AS
SELECT p.person_id, p.day, p.page, p.views
FROM person_day_pages AS p
WHERE p.person_id IN (SELECT person_id FROM person_keys)
  AND p.day IN (SELECT day FROM day_keys)
  AND p.person_id NOT IN (SELECT old_person FROM moved)
  AND (p.person_id, p.day) IN (SELECT person_id, day FROM touched_days);

CREATE OR REPLACE TEMP TABLE new_pages AS
SELECT person_id, day, page, CAST(sum(views) AS BIGINT) AS views
FROM (
    SELECT * FROM staying_pages
    UNION ALL SELECT * FROM moving_pages
    UNION ALL SELECT * FROM fresh_pages
) AS parts
GROUP BY person_id, day, page;

-- Daily rows: recounted for the days that changed, kept for the others, and every day of a
-- touched person numbered again.
CREATE OR REPLACE TEMP TABLE new_days AS
SELECT person_id, day, views, pages,
       row_number() OVER (PARTITION BY person_id ORDER BY day) AS day_number
FROM (
    SELECT person_id, day, CAST(sum(views) AS BIGINT) AS views, count(*) AS pages
    FROM new_pages GROUP BY person_id, day
    UNION ALL
    SELECT coalesce(mv.new_person, d.person_id), d.day, d.views, d.pages
    FROM person_daily_views AS d LEFT JOIN moved AS mv ON mv.old_person = d.person_id
    WHERE d.person_id IN (SELECT person_id FROM person_keys)
      AND (coalesce(mv.new_person, d.person_id), d.day) NOT IN (
          SELECT person_id, day FROM touched_days)
) AS days;

DELETE FROM identity_map WHERE id IN (SELECT id FROM new_map_keys);

INSERT INTO identity_map SELECT id, person_id FROM new_map;

DELETE FROM person_day_pages
WHERE person_id IN (SELECT person_id FROM person_keys)
  AND (person_id IN (SELECT old_person FROM moved)
       OR (day IN (SELECT day FROM day_keys)
           AND (person_id, day) IN (SELECT person_id, day FROM touched_days)));

INSERT INTO person_day_pages SELECT person_id, day, page, views FROM new_pages;

DELETE FROM person_daily_views WHERE person_id IN (SELECT person_id FROM person_keys);

INSERT INTO person_daily_views SELECT person_id, day, views, pages, day_number FROM new_days;

INSERT INTO view_ids SELECT view_id FROM fresh_views;

COMMIT;
