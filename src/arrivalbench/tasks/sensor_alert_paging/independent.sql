-- Written from the ticket alone: jump from page to page. For every alert, the first alert of the
-- same sensor at or after the end of a 10-minute and of a 30-minute quiet period is found once
-- (a probe placed at that moment, just before any alert raised at it, looks forward to the
-- next alert); the pages are then the chain that starts at each sensor's first alert and
-- follows whichever pointer the page's count of the day selects. An alert that is not a page is
-- covered by the latest page before it.
WITH RECURSIVE a AS MATERIALIZED (
    SELECT alert_id, sensor_id, raised_at FROM alerts
),
marks AS (
    SELECT sensor_id, raised_at AS moment, 1 AS kind, alert_id AS real_id,
           CAST(NULL AS BIGINT) AS probe_of, CAST(NULL AS INTEGER) AS quiet
    FROM a
    UNION ALL
    SELECT sensor_id, raised_at + to_minutes(q.quiet), 0, NULL, alert_id, q.quiet
    FROM a CROSS JOIN (VALUES (10), (30)) AS q (quiet)
),
pointers AS (
    SELECT probe_of, quiet,
           first_value(real_id IGNORE NULLS) OVER (
               PARTITION BY sensor_id ORDER BY moment, kind, real_id
               ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS next_id
    FROM marks
),
next_after AS MATERIALIZED (
    SELECT probe_of AS alert_id,
           max(next_id) FILTER (WHERE quiet = 10) AS after_10,
           max(next_id) FILTER (WHERE quiet = 30) AS after_30
    FROM pointers WHERE probe_of IS NOT NULL
    GROUP BY probe_of
),
firsts AS (
    SELECT sensor_id, arg_min(alert_id, (raised_at, alert_id)) AS alert_id
    FROM a GROUP BY sensor_id
),
pages AS (
    SELECT f.alert_id, a.raised_at, 1 AS nth
    FROM firsts AS f JOIN a USING (alert_id)
    UNION ALL
    SELECT nxt.alert_id, nxt.raised_at,
           CASE WHEN CAST(nxt.raised_at AS DATE) = CAST(p.raised_at AS DATE) THEN p.nth + 1
                ELSE 1 END
    FROM pages AS p
    JOIN next_after AS n ON n.alert_id = p.alert_id
    JOIN a AS nxt ON nxt.alert_id = CASE WHEN p.nth <= 3 THEN n.after_10 ELSE n.after_30 END
),
marked AS (
    SELECT a.alert_id, a.sensor_id, a.raised_at, pages.nth,
           last_value(pages.alert_id IGNORE NULLS) OVER (
               PARTITION BY a.sensor_id ORDER BY a.raised_at, a.alert_id
               ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS latest_page
    FROM a LEFT JOIN pages USING (alert_id)
)
SELECT alert_id, sensor_id, raised_at,
       nth IS NOT NULL AS paged,
       CAST(nth AS INTEGER) AS page_of_day,
       CAST(CASE WHEN nth IS NULL THEN latest_page END AS BIGINT) AS covered_by
FROM marked
