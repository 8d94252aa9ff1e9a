-- expect: ERROR read-target
-- A table macro named like the catalog function the harness asks whether the target exists.
CREATE MACRO main.duckdb_tables() AS TABLE SELECT 'replay' AS database_name, 'main' AS schema_name, 'ad_clicks' AS table_name;
