-- expect: ERROR run
CREATE OR REPLACE TABLE ad_clicks AS SELECT * FROM __batch_0;
