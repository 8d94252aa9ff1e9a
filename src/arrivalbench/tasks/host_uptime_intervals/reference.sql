SELECT
    host_id,
    row_number() OVER (PARTITION BY host_id ORDER BY min(sent_at)) AS interval_seq,
    min(sent_at) AS started_at,
    max(sent_at) AS ended_at,
    count(*) AS heartbeats
FROM (
    SELECT host_id, sent_at,
           sum(opens) OVER (PARTITION BY host_id ORDER BY sent_at, heartbeat_id
                            ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS island
    FROM (
        SELECT host_id, sent_at, heartbeat_id,
               CASE WHEN lag(sent_at) OVER (PARTITION BY host_id ORDER BY sent_at, heartbeat_id)
                         >= sent_at - INTERVAL '5 minutes' THEN 0 ELSE 1 END AS opens
        FROM heartbeats
    ) AS flagged
) AS islands
GROUP BY host_id, island
