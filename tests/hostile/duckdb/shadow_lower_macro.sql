-- expect: ERROR read-target
CREATE MACRO main.lower(x) AS 'ad_clicks'; CREATE TABLE decoy AS SELECT 1 AS x;
