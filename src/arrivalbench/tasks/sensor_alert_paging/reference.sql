WITH RECURSIVE ordered_alerts AS (
    SELECT alert_id, sensor_id, raised_at,
           row_number() OVER (PARTITION BY sensor_id ORDER BY raised_at, alert_id) AS n
    FROM alerts
),
walk AS (
    SELECT sensor_id, n, alert_id, raised_at,
           TRUE AS paged, 1 AS page_of_day, CAST(NULL AS BIGINT) AS covered_by,
           alert_id AS page_id, raised_at + INTERVAL 10 MINUTE AS quiet_until,
           CAST(raised_at AS DATE) AS page_day, 1 AS pages_that_day
    FROM ordered_alerts
    WHERE n = 1
    UNION ALL
    SELECT o.sensor_id, o.n, o.alert_id, o.raised_at,
           NOT covered,
           CASE WHEN covered THEN NULL ELSE next_count END,
           CASE WHEN covered THEN w.page_id END,
           CASE WHEN covered THEN w.page_id ELSE o.alert_id END,
           CASE WHEN covered THEN w.quiet_until
                WHEN next_count <= 3 THEN o.raised_at + INTERVAL 10 MINUTE
                ELSE o.raised_at + INTERVAL 30 MINUTE END,
           CASE WHEN covered THEN w.page_day ELSE CAST(o.raised_at AS DATE) END,
           CASE WHEN covered THEN w.pages_that_day ELSE next_count END
    FROM walk AS w
    JOIN ordered_alerts AS o ON o.sensor_id = w.sensor_id AND o.n = w.n + 1,
    LATERAL (SELECT o.raised_at < w.quiet_until AS covered,
                    CASE WHEN CAST(o.raised_at AS DATE) = w.page_day THEN w.pages_that_day + 1
                         ELSE 1 END AS next_count)
)
SELECT alert_id, sensor_id, raised_at, paged, page_of_day, covered_by
FROM walk
