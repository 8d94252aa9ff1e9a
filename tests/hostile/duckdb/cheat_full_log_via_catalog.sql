-- expect: ERROR run
-- The harness's own tables of later batches are not in any catalog the pipeline can reach.
CREATE TABLE ad_clicks AS SELECT * FROM (SELECT table_name AS click_id FROM duckdb_tables() WHERE table_name LIKE '__%') q, __deliveries_clicks;
