-- expect: ERROR memory
CREATE TABLE ad_clicks AS SELECT repeat('x', 2000000000) AS click_id;
