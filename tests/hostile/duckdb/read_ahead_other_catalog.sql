-- expect: ERROR run
CREATE OR REPLACE TABLE ad_clicks AS SELECT * FROM temp.main.__batch_0;
