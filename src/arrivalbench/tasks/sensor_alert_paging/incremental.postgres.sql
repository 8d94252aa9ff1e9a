-- Incremental: the table itself is the history (keyed on the alert id), and sensor_state keeps,
-- per sensor, its latest alert and the state of its latest page (the page, the end of its quiet
-- period, its calendar day and its count of that day). A run reads the stored ids its batch
-- repeats and the state of the sensors it touches. New alerts that all come after a sensor's
-- latest one are walked on from that state; a sensor that receives an earlier alert has every
-- one of its alerts walked again from its first (the decision of every later alert may flip,
-- and with it the day's page counts). Everything commits together: a retried batch finds its
-- alerts in the table.
-- No key list a lookup joins against is ever empty (an empty one holds a placeholder key):
-- from an empty side DuckDB pushes no filter into the scan of the stored table and reads it
-- whole.
BEGIN TRANSACTION;

CREATE TABLE IF NOT EXISTS alert_pages (
    alert_id    BIGINT PRIMARY KEY,
    sensor_id   VARCHAR,
    raised_at   TIMESTAMP,
    paged       BOOLEAN,
    page_of_day INTEGER,
    covered_by  BIGINT
);

CREATE TABLE IF NOT EXISTS sensor_state (
    sensor_id      VARCHAR PRIMARY KEY,
    last_at        TIMESTAMP,
    last_id        BIGINT,
    page_id        BIGINT,
    quiet_until    TIMESTAMP,
    page_day       DATE,
    pages_that_day INTEGER
);

DROP TABLE IF EXISTS batch_ids;

CREATE TEMP TABLE batch_ids AS
SELECT alert_id FROM incoming.alerts
UNION ALL SELECT coalesce(min(alert_id), -1) FROM incoming.alerts;

DROP TABLE IF EXISTS known;

CREATE TEMP TABLE known AS
SELECT p.alert_id FROM alert_pages AS p WHERE p.alert_id IN (SELECT alert_id FROM batch_ids);

DROP TABLE IF EXISTS fresh;

CREATE TEMP TABLE fresh AS
SELECT DISTINCT ON (alert_id) alert_id, sensor_id, raised_at
FROM incoming.alerts
WHERE alert_id NOT IN (SELECT alert_id FROM known)
ORDER BY alert_id;

DROP TABLE IF EXISTS sensor_keys;

CREATE TEMP TABLE sensor_keys AS
SELECT DISTINCT sensor_id FROM fresh
UNION ALL SELECT coalesce(min(sensor_id), '') FROM fresh;

DROP TABLE IF EXISTS stored;

CREATE TEMP TABLE stored AS
SELECT s.* FROM sensor_state AS s WHERE s.sensor_id IN (SELECT sensor_id FROM sensor_keys);

-- Sensors whose new alerts do not all come after their latest stored alert.
DROP TABLE IF EXISTS reordered;

CREATE TEMP TABLE reordered AS
SELECT DISTINCT f.sensor_id FROM fresh AS f JOIN stored AS s USING (sensor_id)
WHERE (f.raised_at, f.alert_id) < (s.last_at, s.last_id);

DROP TABLE IF EXISTS reordered_keys;

CREATE TEMP TABLE reordered_keys AS
SELECT sensor_id FROM reordered
UNION ALL SELECT coalesce(min(sensor_id), '') FROM reordered;

-- What each sensor walks: its new alerts from its stored state, or, for a reordered sensor,
-- all its alerts from nothing.
DROP TABLE IF EXISTS steps;

CREATE TEMP TABLE steps AS
SELECT sensor_id, alert_id, raised_at,
       row_number() OVER (PARTITION BY sensor_id ORDER BY raised_at, alert_id) AS n
FROM (
    SELECT p.sensor_id, p.alert_id, p.raised_at
    FROM alert_pages AS p WHERE p.sensor_id IN (SELECT sensor_id FROM reordered_keys)
    UNION ALL
    SELECT sensor_id, alert_id, raised_at FROM fresh
) AS candidates
WHERE sensor_id IN (SELECT sensor_id FROM fresh);

DROP TABLE IF EXISTS starts;

CREATE TEMP TABLE starts AS
SELECT k.sensor_id, s.page_id, s.quiet_until, s.page_day, s.pages_that_day
FROM (SELECT DISTINCT sensor_id FROM fresh) AS k
LEFT JOIN stored AS s
  ON s.sensor_id = k.sensor_id AND k.sensor_id NOT IN (SELECT sensor_id FROM reordered);

DROP TABLE IF EXISTS walked;

CREATE TEMP TABLE walked AS
WITH RECURSIVE walk AS (
    SELECT sensor_id, CAST(0 AS BIGINT) AS n, CAST(NULL AS BIGINT) AS alert_id,
           CAST(NULL AS TIMESTAMP) AS raised_at, CAST(NULL AS BOOLEAN) AS paged,
           CAST(NULL AS INTEGER) AS page_of_day, CAST(NULL AS BIGINT) AS covered_by,
           page_id, quiet_until, page_day, pages_that_day
    FROM starts
    UNION ALL
    SELECT o.sensor_id, o.n, o.alert_id, o.raised_at,
           NOT coalesce(o.raised_at < w.quiet_until, FALSE),
           CASE WHEN o.raised_at < w.quiet_until THEN NULL
                WHEN CAST(o.raised_at AS DATE) = w.page_day THEN w.pages_that_day + 1
                ELSE 1 END,
           CASE WHEN o.raised_at < w.quiet_until THEN w.page_id END,
           CASE WHEN o.raised_at < w.quiet_until THEN w.page_id ELSE o.alert_id END,
           CASE WHEN o.raised_at < w.quiet_until THEN w.quiet_until
                WHEN CAST(o.raised_at AS DATE) = w.page_day AND w.pages_that_day >= 3
                    THEN o.raised_at + INTERVAL '30 minutes'
                ELSE o.raised_at + INTERVAL '10 minutes' END,
           CASE WHEN o.raised_at < w.quiet_until THEN w.page_day
                ELSE CAST(o.raised_at AS DATE) END,
           CASE WHEN o.raised_at < w.quiet_until THEN w.pages_that_day
                WHEN CAST(o.raised_at AS DATE) = w.page_day THEN w.pages_that_day + 1
                ELSE 1 END
    FROM walk AS w
    JOIN steps AS o ON o.sensor_id = w.sensor_id AND o.n = w.n + 1
)
SELECT * FROM walk WHERE n > 0;

DELETE FROM alert_pages
WHERE sensor_id IN (SELECT sensor_id FROM reordered_keys)
  AND sensor_id IN (SELECT sensor_id FROM reordered);

INSERT INTO alert_pages
SELECT alert_id, sensor_id, raised_at, paged, page_of_day, covered_by FROM walked;

DELETE FROM sensor_state
WHERE sensor_id IN (SELECT sensor_id FROM sensor_keys)
  AND sensor_id IN (SELECT sensor_id FROM fresh);

INSERT INTO sensor_state
SELECT DISTINCT ON (sensor_id)
       sensor_id, raised_at, alert_id, page_id, quiet_until, page_day, pages_that_day
FROM walked
ORDER BY sensor_id, n DESC;

COMMIT;
