-- expect: ERROR read-target
CREATE TABLE ad_clicks AS SELECT range::VARCHAR AS click_id FROM range(2000000);
