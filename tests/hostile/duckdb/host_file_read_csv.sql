-- expect: ERROR sandbox
CREATE TABLE ad_clicks AS SELECT * FROM read_csv('/etc/passwd');
