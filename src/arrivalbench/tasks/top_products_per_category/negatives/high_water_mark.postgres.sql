-- Land the lines ordered at or after the newest line landed so far; recompute the ranking from
-- the landing table on every run, each line id once.
CREATE TABLE IF NOT EXISTS lines_landing (
    line_id     BIGINT,
    order_id    BIGINT,
    product_id  INTEGER,
    category    VARCHAR,
    quantity    INTEGER,
    line_amount DECIMAL(10,2),
    ordered_at  TIMESTAMP
);

INSERT INTO lines_landing
SELECT line_id, order_id, product_id, category, quantity, line_amount, ordered_at
FROM incoming.order_lines
WHERE ordered_at >= (SELECT COALESCE(max(ordered_at), TIMESTAMP '1970-01-01') FROM lines_landing);

DROP TABLE IF EXISTS top_products;

CREATE TABLE top_products AS
WITH lines AS (
    SELECT DISTINCT ON (line_id) * FROM lines_landing ORDER BY line_id, ordered_at
),
per_product AS (
    SELECT category, product_id, sum(line_amount) AS revenue, sum(quantity) AS units
    FROM lines
    GROUP BY category, product_id
)
SELECT category, rank, product_id, revenue, units
FROM (
    SELECT *, row_number() OVER (PARTITION BY category
                                 ORDER BY revenue DESC NULLS LAST, product_id) AS rank
    FROM per_product
)
WHERE rank <= 3;
