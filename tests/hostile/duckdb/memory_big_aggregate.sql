-- expect: ERROR memory
CREATE TABLE ad_clicks AS SELECT string_agg(repeat('x', 1000), '') AS click_id FROM range(10000000);
