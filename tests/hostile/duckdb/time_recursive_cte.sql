-- expect: ERROR timeout
CREATE TABLE ad_clicks AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) AS click_id FROM r;
