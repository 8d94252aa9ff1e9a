-- expect: ERROR run
CREATE TABLE ad_clicks AS SELECT getenv('HOME') AS click_id;
