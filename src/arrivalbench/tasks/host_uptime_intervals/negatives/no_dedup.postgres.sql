-- Stored intervals and the batch's heartbeats are chained by the 5-minute rule and the
-- host's intervals numbered again.
CREATE TABLE IF NOT EXISTS host_uptime_intervals (
    host_id      VARCHAR,
    interval_seq BIGINT,
    started_at   TIMESTAMP,
    ended_at     TIMESTAMP,
    heartbeats   BIGINT
);

CREATE TEMP TABLE fresh AS
SELECT heartbeat_id, host_id, sent_at FROM incoming.heartbeats;

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

COMMIT;
