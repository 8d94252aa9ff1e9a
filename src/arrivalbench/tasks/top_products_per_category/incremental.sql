-- Incremental: deltas applied by key, then a per-key re-ranking. The line ids counted so far are
-- kept in a registry keyed (indexed) on the id, and product_state keeps each product's revenue
-- and units, indexed on the product and on its category. A run looks up only the ids its batch
-- carries, adds the lines not counted before to just the products they name, then re-ranks
-- just the categories those products are in (an index scan of their products) and rewrites
-- those categories' rows; one transaction, so a retried batch adds nothing twice.
-- DuckDB reads the whole stored side of a join whose other side ends up empty, so the registry
-- and the state hold one sentinel row each that every lookup also asks for.
BEGIN TRANSACTION;

-- Created with their sentinel rows, once (the statements do nothing when the tables exist).
CREATE TABLE IF NOT EXISTS line_ids AS SELECT -1::BIGINT AS line_id;
CREATE UNIQUE INDEX IF NOT EXISTS line_ids_id ON line_ids (line_id);

-- product_key and category_key: the category (a missing one apart from every named one) and,
-- for product_key, the product.
CREATE TABLE IF NOT EXISTS product_state AS
SELECT ''::VARCHAR AS product_key, ''::VARCHAR AS category_key, NULL::VARCHAR AS category,
       NULL::INTEGER AS product_id, NULL::DECIMAL(14,2) AS revenue, NULL::BIGINT AS units;
CREATE UNIQUE INDEX IF NOT EXISTS product_state_key ON product_state (product_key);
CREATE INDEX IF NOT EXISTS product_state_category ON product_state (category_key);

CREATE TABLE IF NOT EXISTS top_products (
    category   VARCHAR,
    rank       INTEGER,
    product_id INTEGER,
    revenue    DECIMAL(14,2),
    units      BIGINT
);

CREATE OR REPLACE TEMP TABLE known AS
SELECT k.line_id FROM line_ids AS k
WHERE k.line_id IN (SELECT line_id FROM incoming.order_lines UNION ALL SELECT -1);

CREATE OR REPLACE TEMP TABLE fresh AS
SELECT line_id, product_id, category, quantity, line_amount
FROM incoming.order_lines
WHERE line_id NOT IN (SELECT line_id FROM known)
QUALIFY row_number() OVER (PARTITION BY line_id ORDER BY ordered_at) = 1;

INSERT INTO line_ids SELECT line_id FROM fresh;

CREATE OR REPLACE TEMP TABLE delta AS
SELECT
    category_key || '|' || product_id AS product_key,
    category_key, category, product_id,
    sum(line_amount) AS revenue,
    sum(quantity) AS units
FROM (SELECT *, CASE WHEN category IS NULL THEN '-' ELSE '+' || category END AS category_key
      FROM fresh)
GROUP BY ALL;

CREATE OR REPLACE TEMP TABLE stored AS
SELECT s.* FROM product_state AS s
WHERE s.product_key IN (SELECT product_key FROM delta UNION ALL SELECT '');
DELETE FROM stored WHERE product_key = '';

-- The sentinel goes with the stored rows (never an empty lookup) and comes back.
DELETE FROM product_state
WHERE product_key IN (SELECT product_key FROM stored UNION ALL SELECT '');

INSERT INTO product_state
SELECT d.product_key, d.category_key, d.category, d.product_id,
       CAST(d.revenue + coalesce(s.revenue, 0) AS DECIMAL(14,2)),
       d.units + coalesce(s.units, 0)
FROM delta AS d LEFT JOIN stored AS s USING (product_key)
UNION ALL SELECT '', '', NULL, NULL, NULL, NULL;

CREATE OR REPLACE TEMP TABLE ranked AS
SELECT category, rank, product_id, revenue, units
FROM (
    SELECT *, row_number() OVER (PARTITION BY category_key
                                 ORDER BY revenue DESC, product_id) AS rank
    FROM product_state
    WHERE category_key IN (SELECT category_key FROM delta UNION ALL SELECT '')
      AND product_key <> ''
)
WHERE rank <= 3;

DELETE FROM top_products AS t
USING (SELECT DISTINCT category FROM ranked) AS c
WHERE t.category IS NOT DISTINCT FROM c.category;

INSERT INTO top_products SELECT * FROM ranked;

DROP TABLE ranked;
DROP TABLE stored;
DROP TABLE delta;
DROP TABLE fresh;
DROP TABLE known;

COMMIT;
