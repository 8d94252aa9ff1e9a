-- An interval starts at every (host, second) with no heartbeat of the host in the 5 minutes
-- before it; each heartbeat belongs to the latest start at or before it.
WITH beats AS (
    SELECT DISTINCT heartbeat_id, host_id, sent_at FROM heartbeats
),
starts AS (
    SELECT DISTINCT b.host_id, b.sent_at AS started_at
    FROM beats AS b
    WHERE NOT EXISTS (
        SELECT 1 FROM beats AS p
        WHERE p.host_id = b.host_id
          AND p.sent_at < b.sent_at
          AND p.sent_at >= b.sent_at - INTERVAL '5 minutes'
    )
),
numbered AS (
    SELECT host_id, started_at,
           row_number() OVER (PARTITION BY host_id ORDER BY started_at) AS interval_seq
    FROM starts
),
owned AS (
    SELECT b.heartbeat_id, b.host_id, b.sent_at,
           (SELECT max(n.interval_seq) FROM numbered AS n
            WHERE n.host_id = b.host_id AND n.started_at <= b.sent_at) AS interval_seq
    FROM beats AS b
)
SELECT
    CAST(n.host_id AS VARCHAR) AS host_id,
    CAST(n.interval_seq AS BIGINT) AS interval_seq,
    CAST(n.started_at AS TIMESTAMP) AS started_at,
    CAST(max(o.sent_at) AS TIMESTAMP) AS ended_at,
    CAST(count(*) AS BIGINT) AS heartbeats
FROM numbered AS n
JOIN owned AS o ON o.host_id = n.host_id AND o.interval_seq = n.interval_seq
GROUP BY n.host_id, n.interval_seq, n.started_at
