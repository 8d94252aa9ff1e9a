-- expect: ERROR read-target
CREATE VIEW duckdb_tables AS SELECT 'main' AS schema_name, 'ad_clicks' AS table_name;
