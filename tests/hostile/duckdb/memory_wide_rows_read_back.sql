-- expect: ERROR memory
CREATE TABLE ad_clicks AS SELECT repeat('x', 30000000) AS click_id FROM range(30);
