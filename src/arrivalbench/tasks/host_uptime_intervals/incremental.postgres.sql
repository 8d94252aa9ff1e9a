-- Incremental: the intervals are kept as they are (with their heartbeat counts) and the ids of
-- the heartbeats they hold in seen_heartbeats. A run reads the stored ids its batch repeats and
-- the intervals of the hosts its new heartbeats belong to, never the heartbeats of earlier
-- runs: stored intervals and new heartbeats (each a one-second interval) are chained again by
-- the 5-minute rule, so that a heartbeat in a gap joins the intervals on both sides, and every
-- interval of such a host is numbered again. Everything commits together: a retried batch
-- finds its heartbeats in seen_heartbeats.
CREATE TABLE IF NOT EXISTS host_uptime_intervals (
    host_id      VARCHAR,
    interval_seq BIGINT,
    started_at   TIMESTAMP,
    ended_at     TIMESTAMP,
    heartbeats   BIGINT
);

CREATE TABLE IF NOT EXISTS seen_heartbeats (heartbeat_id BIGINT PRIMARY KEY);

-- No key list a lookup joins against is ever empty (an empty one holds a placeholder key):
-- from an empty side DuckDB pushes no keys into the scan of the stored table and reads it whole.
CREATE TEMP TABLE batch_ids AS
SELECT heartbeat_id FROM incoming.heartbeats
UNION ALL SELECT coalesce(min(heartbeat_id), 0) FROM incoming.heartbeats;

CREATE TEMP TABLE known AS
SELECT s.heartbeat_id FROM seen_heartbeats AS s
WHERE s.heartbeat_id IN (SELECT heartbeat_id FROM batch_ids);

CREATE TEMP TABLE fresh AS
SELECT DISTINCT ON (heartbeat_id) heartbeat_id, host_id, sent_at
FROM incoming.heartbeats
WHERE heartbeat_id NOT IN (SELECT heartbeat_id FROM known)
ORDER BY heartbeat_id;

CREATE TEMP TABLE host_keys AS
SELECT DISTINCT host_id FROM fresh
UNION ALL SELECT coalesce(min(host_id), '') FROM fresh;

CREATE TEMP TABLE pieces AS
SELECT i.host_id, i.started_at, i.ended_at, i.heartbeats
FROM host_uptime_intervals AS i
WHERE i.host_id IN (SELECT host_id FROM host_keys)
UNION ALL
SELECT host_id, sent_at, sent_at, 1 FROM fresh;

-- A piece opens a new interval when it starts more than 5 minutes after every piece before it
-- has ended.
CREATE TEMP TABLE chained AS
SELECT host_id, started_at, ended_at, heartbeats,
       sum(opens) OVER (PARTITION BY host_id ORDER BY started_at, ended_at
                        ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS island
FROM (
    SELECT host_id, started_at, ended_at, heartbeats,
           CASE WHEN max(ended_at) OVER (PARTITION BY host_id ORDER BY started_at, ended_at
                                         ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
                     >= started_at - INTERVAL '5 minutes' THEN 0 ELSE 1 END AS opens
    FROM pieces
) AS flagged;

CREATE TEMP TABLE rebuilt AS
SELECT host_id,
       CAST(row_number() OVER (PARTITION BY host_id ORDER BY min(started_at)) AS BIGINT)
           AS interval_seq,
       min(started_at) AS started_at,
       max(ended_at) AS ended_at,
       CAST(sum(heartbeats) AS BIGINT) AS heartbeats
FROM chained
GROUP BY host_id, island;

BEGIN TRANSACTION;

DELETE FROM host_uptime_intervals
WHERE host_id IN (SELECT host_id FROM host_keys)
  AND host_id IN (SELECT host_id FROM fresh);

INSERT INTO host_uptime_intervals
SELECT host_id, interval_seq, started_at, ended_at, heartbeats FROM rebuilt;

INSERT INTO seen_heartbeats SELECT heartbeat_id FROM fresh;

COMMIT;
