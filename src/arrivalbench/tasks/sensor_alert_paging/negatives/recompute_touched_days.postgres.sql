-- Recompute the calendar days that new alerts fall on: every alert is kept once in a history
-- keyed on its id; for each sensor, the days from the earliest to the latest day of its new
-- alerts are walked again from the sensor's latest stored page before the first of them, and
-- their rows replaced. Everything commits together.
BEGIN TRANSACTION;

CREATE TABLE IF NOT EXISTS alert_history (
    alert_id   BIGINT PRIMARY KEY,
    sensor_id  VARCHAR,
    alert_type VARCHAR,
    raised_at  TIMESTAMP
);

CREATE TABLE IF NOT EXISTS alert_pages (
    alert_id    BIGINT,
    sensor_id   VARCHAR,
    raised_at   TIMESTAMP,
    paged       BOOLEAN,
    page_of_day INTEGER,
    covered_by  BIGINT
);

DROP TABLE IF EXISTS fresh;

CREATE TEMP TABLE fresh AS
SELECT DISTINCT ON (alert_id) alert_id, sensor_id, alert_type, raised_at
FROM incoming.alerts
WHERE alert_id NOT IN (SELECT alert_id FROM alert_history)
ORDER BY alert_id;

INSERT INTO alert_history SELECT * FROM fresh;

DROP TABLE IF EXISTS touched;

CREATE TEMP TABLE touched AS
SELECT sensor_id, min(CAST(raised_at AS DATE)) AS first_day,
       max(CAST(raised_at AS DATE)) AS last_day
FROM fresh GROUP BY sensor_id;

DROP TABLE IF EXISTS steps;

CREATE TEMP TABLE steps AS
SELECT h.sensor_id, h.alert_id, h.raised_at,
       row_number() OVER (PARTITION BY h.sensor_id ORDER BY h.raised_at, h.alert_id) AS n
FROM alert_history AS h JOIN touched AS t USING (sensor_id)
WHERE CAST(h.raised_at AS DATE) BETWEEN t.first_day AND t.last_day;

DROP TABLE IF EXISTS starts;

CREATE TEMP TABLE starts AS
SELECT t.sensor_id, last.page_id, last.quiet_until, last.page_day, last.pages_that_day
FROM touched AS t
LEFT JOIN (
    SELECT DISTINCT ON (t2.sensor_id) t2.sensor_id, p.alert_id AS page_id,
           p.raised_at + CASE WHEN p.page_of_day <= 3 THEN INTERVAL '10 minutes'
                              ELSE INTERVAL '30 minutes' END AS quiet_until,
           CAST(p.raised_at AS DATE) AS page_day, p.page_of_day AS pages_that_day
    FROM alert_pages AS p JOIN touched AS t2 USING (sensor_id)
    WHERE p.paged AND CAST(p.raised_at AS DATE) < t2.first_day
    ORDER BY t2.sensor_id, p.raised_at DESC, p.alert_id DESC
) AS last USING (sensor_id);

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

DELETE FROM alert_pages AS p
USING touched AS t
WHERE p.sensor_id = t.sensor_id
  AND CAST(p.raised_at AS DATE) BETWEEN t.first_day AND t.last_day;

INSERT INTO alert_pages
SELECT alert_id, sensor_id, raised_at, paged, page_of_day, covered_by FROM walked;

COMMIT;
