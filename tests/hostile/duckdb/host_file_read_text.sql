-- expect: ERROR sandbox
CREATE TABLE ad_clicks AS SELECT content AS click_id FROM read_text('/etc/passwd');
