-- Every delivered touch and conversion is appended to a history as it comes; both tables are
-- then rebuilt from the histories in one transaction.
BEGIN TRANSACTION;

CREATE TABLE IF NOT EXISTS touch_history (
    touch_id   BIGINT,
    user_id    BIGINT,
    channel    VARCHAR,
    touched_at TIMESTAMP
);

CREATE TABLE IF NOT EXISTS conversion_history (
    conversion_id BIGINT,
    user_id       BIGINT,
    revenue       DECIMAL(10,2),
    converted_at  TIMESTAMP
);

INSERT INTO touch_history
SELECT touch_id, user_id, channel, touched_at FROM incoming.touches;

INSERT INTO conversion_history
SELECT conversion_id, user_id, revenue, converted_at FROM incoming.conversions;

CREATE OR REPLACE TABLE conversion_attribution AS
WITH conv AS (
    SELECT *, lag(converted_at) OVER (PARTITION BY user_id
                                      ORDER BY converted_at, conversion_id) AS previous_at
    FROM conversion_history
),
credited AS (
    SELECT c.conversion_id, t.touch_id, t.channel,
           row_number() OVER (PARTITION BY c.conversion_id
                              ORDER BY t.touched_at DESC, t.touch_id DESC) AS n
    FROM conv AS c
    JOIN touch_history AS t
      ON t.user_id = c.user_id
     AND t.touched_at <= c.converted_at
     AND t.touched_at >= c.converted_at - INTERVAL '7 days'
     AND (c.previous_at IS NULL OR t.touched_at > c.previous_at)
)
SELECT c.conversion_id, c.user_id, c.converted_at, c.revenue, r.touch_id,
       coalesce(r.channel, 'direct') AS channel
FROM conv AS c LEFT JOIN credited AS r ON r.conversion_id = c.conversion_id AND r.n = 1;

CREATE OR REPLACE TABLE channel_daily_revenue AS
SELECT CAST(converted_at AS DATE) AS day, channel, count(*) AS conversions,
       CAST(sum(revenue) AS DECIMAL(12,2)) AS revenue
FROM conversion_attribution
GROUP BY CAST(converted_at AS DATE), channel;

COMMIT;
