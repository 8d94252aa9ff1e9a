-- expect: ERROR sandbox
CREATE TABLE ad_clicks AS SELECT * FROM read_csv('http://127.0.0.1:9/x.csv');
