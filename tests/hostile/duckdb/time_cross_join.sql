-- expect: ERROR memory
CREATE TABLE ad_clicks AS SELECT count(*) AS click_id FROM range(100000000) a, range(100000000) b;
