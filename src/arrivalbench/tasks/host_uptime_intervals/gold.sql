-- Every delivered heartbeat goes to heartbeats_landing as it comes; the intervals are then
-- recomputed from the landing table, one heartbeat per id.
CREATE TABLE IF NOT EXISTS heartbeats_landing (
    heartbeat_id  BIGINT,
    host_id       VARCHAR,
    agent_version VARCHAR,
    sent_at       TIMESTAMP
);

INSERT INTO heartbeats_landing
SELECT heartbeat_id, host_id, agent_version, sent_at FROM incoming.heartbeats;

DROP TABLE IF EXISTS host_uptime_intervals;

CREATE TABLE host_uptime_intervals AS
WITH beats AS (
    SELECT DISTINCT ON (heartbeat_id) heartbeat_id, host_id, sent_at
    FROM heartbeats_landing
    ORDER BY heartbeat_id
),
flagged AS (
    SELECT host_id, sent_at, heartbeat_id,
           CASE WHEN lag(sent_at) OVER (PARTITION BY host_id ORDER BY sent_at, heartbeat_id)
                     >= sent_at - INTERVAL '5 minutes' THEN 0 ELSE 1 END AS opens
    FROM beats
),
islands AS (
    SELECT host_id, sent_at,
           sum(opens) OVER (PARTITION BY host_id ORDER BY sent_at, heartbeat_id
                            ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS island
    FROM flagged
)
SELECT
    host_id,
    CAST(row_number() OVER (PARTITION BY host_id ORDER BY min(sent_at)) AS BIGINT)
        AS interval_seq,
    min(sent_at) AS started_at,
    max(sent_at) AS ended_at,
    CAST(count(*) AS BIGINT) AS heartbeats
FROM islands
GROUP BY host_id, island;
