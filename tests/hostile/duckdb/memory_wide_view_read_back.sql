-- expect: ERROR memory
-- A view is computed when the harness reads it: 30 rows of 30 MB, built on the way out.
CREATE OR REPLACE VIEW ad_clicks AS SELECT repeat('x', 30000000) AS click_id FROM range(30);
