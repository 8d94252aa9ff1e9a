-- expect: ERROR sandbox
CREATE TABLE ad_clicks AS SELECT file AS click_id FROM glob('/etc/*');
