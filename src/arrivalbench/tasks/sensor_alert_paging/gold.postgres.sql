-- Keep every alert once, keyed on its id; rebuild the paging decisions from the whole history
-- on every run by walking each sensor's alerts in order, carrying its latest page.
CREATE TABLE IF NOT EXISTS alert_history (
    alert_id   BIGINT,
    sensor_id  VARCHAR,
    alert_type VARCHAR,
    raised_at  TIMESTAMP
);

INSERT INTO alert_history
SELECT DISTINCT ON (alert_id) alert_id, sensor_id, alert_type, raised_at
FROM incoming.alerts
WHERE alert_id NOT IN (SELECT alert_id FROM alert_history)
ORDER BY alert_id;

DROP TABLE IF EXISTS alert_pages;

CREATE TABLE alert_pages AS
WITH RECURSIVE ordered_alerts AS (
    SELECT alert_id, sensor_id, raised_at,
           row_number() OVER (PARTITION BY sensor_id ORDER BY raised_at, alert_id) AS n
    FROM alert_history
),
walk AS (
    SELECT sensor_id, n, alert_id, raised_at,
           TRUE AS paged, 1 AS page_of_day, CAST(NULL AS BIGINT) AS covered_by,
           alert_id AS page_id, raised_at + INTERVAL '10 minutes' AS quiet_until,
           CAST(raised_at AS DATE) AS page_day, 1 AS pages_that_day
    FROM ordered_alerts
    WHERE n = 1
    UNION ALL
    SELECT o.sensor_id, o.n, o.alert_id, o.raised_at,
           o.raised_at >= w.quiet_until,
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
    JOIN ordered_alerts AS o ON o.sensor_id = w.sensor_id AND o.n = w.n + 1
)
SELECT alert_id, sensor_id, raised_at, paged, page_of_day, covered_by
FROM walk;
