-- Credit conversions right, add revenue once: every conversion is credited as
-- incremental.sql does (a user with an older record is credited again from everything it
-- has), and each new conversion adds its revenue to the day and channel it is credited to.
-- Ids already stored are skipped; everything commits together.
BEGIN TRANSACTION;

CREATE TABLE IF NOT EXISTS conversion_attribution (
    conversion_id BIGINT PRIMARY KEY,
    user_id       BIGINT,
    converted_at  TIMESTAMP,
    revenue       DECIMAL(10,2),
    touch_id      BIGINT,
    channel       VARCHAR
);

CREATE TABLE IF NOT EXISTS channel_daily_revenue (
    day         DATE,
    channel     VARCHAR,
    conversions BIGINT,
    revenue     DECIMAL(12,2)
);

CREATE TABLE IF NOT EXISTS touch_store (
    touch_id   BIGINT PRIMARY KEY,
    user_id    BIGINT,
    channel    VARCHAR,
    touched_at TIMESTAMP
);

CREATE TABLE IF NOT EXISTS user_state (
    user_id    BIGINT PRIMARY KEY,
    last_at    TIMESTAMP,
    conv_at    TIMESTAMP,
    conv_id    BIGINT,
    touch_id   BIGINT,
    touched_at TIMESTAMP,
    channel    VARCHAR
);

DROP TABLE IF EXISTS batch_touch_ids;

CREATE TEMP TABLE batch_touch_ids AS
SELECT touch_id FROM incoming.touches
UNION ALL SELECT coalesce(min(touch_id), -1) FROM incoming.touches;

DROP TABLE IF EXISTS known_touches;

CREATE TEMP TABLE known_touches AS
SELECT t.touch_id FROM touch_store AS t
WHERE t.touch_id IN (SELECT touch_id FROM batch_touch_ids);

DROP TABLE IF EXISTS fresh_touches;

CREATE TEMP TABLE fresh_touches AS
SELECT DISTINCT ON (touch_id) touch_id, user_id, channel, touched_at
FROM incoming.touches
WHERE touch_id NOT IN (SELECT touch_id FROM known_touches)
ORDER BY touch_id;

DROP TABLE IF EXISTS batch_conversion_ids;

CREATE TEMP TABLE batch_conversion_ids AS
SELECT conversion_id FROM incoming.conversions
UNION ALL SELECT coalesce(min(conversion_id), -1) FROM incoming.conversions;

DROP TABLE IF EXISTS known_conversions;

CREATE TEMP TABLE known_conversions AS
SELECT a.conversion_id FROM conversion_attribution AS a
WHERE a.conversion_id IN (SELECT conversion_id FROM batch_conversion_ids);

DROP TABLE IF EXISTS fresh_conversions;

CREATE TEMP TABLE fresh_conversions AS
SELECT DISTINCT ON (conversion_id) conversion_id, user_id, revenue, converted_at
FROM incoming.conversions
WHERE conversion_id NOT IN (SELECT conversion_id FROM known_conversions)
ORDER BY conversion_id;

DROP TABLE IF EXISTS users;

CREATE TEMP TABLE users AS
SELECT user_id, min(event_at) AS first_at, max(event_at) AS last_at
FROM (
    SELECT user_id, touched_at AS event_at FROM fresh_touches
    UNION ALL SELECT user_id, converted_at FROM fresh_conversions
) AS fresh
GROUP BY user_id;

DROP TABLE IF EXISTS user_keys;

CREATE TEMP TABLE user_keys AS
SELECT user_id FROM users UNION ALL SELECT coalesce(min(user_id), -1) FROM users;

DROP TABLE IF EXISTS stored_state;

CREATE TEMP TABLE stored_state AS
SELECT s.* FROM user_state AS s WHERE s.user_id IN (SELECT user_id FROM user_keys);

-- Users with a new record at or before their latest stored one.
DROP TABLE IF EXISTS reordered;

CREATE TEMP TABLE reordered AS
SELECT u.user_id FROM users AS u JOIN stored_state AS s ON s.user_id = u.user_id
WHERE u.first_at <= s.last_at;

DROP TABLE IF EXISTS reordered_keys;

CREATE TEMP TABLE reordered_keys AS
SELECT user_id FROM reordered UNION ALL SELECT coalesce(min(user_id), -1) FROM reordered;

DROP TABLE IF EXISTS old_conversions;

CREATE TEMP TABLE old_conversions AS
SELECT a.conversion_id, a.user_id, a.converted_at, a.revenue, a.channel
FROM conversion_attribution AS a
WHERE a.user_id IN (SELECT user_id FROM reordered_keys)
  AND a.user_id IN (SELECT user_id FROM reordered);

-- What each user's conversions are credited over: for a user credited from its state, its
-- latest conversion (already credited, only the previous one of the next) and its latest touch
-- since then, with its new records; for a reordered user, everything it has.
DROP TABLE IF EXISTS conv_universe;

CREATE TEMP TABLE conv_universe AS
SELECT conversion_id, user_id, converted_at, revenue, TRUE AS rewrite FROM fresh_conversions
UNION ALL
SELECT conversion_id, user_id, converted_at, revenue, TRUE FROM old_conversions
UNION ALL
SELECT conv_id, user_id, conv_at, NULL, FALSE FROM stored_state
WHERE conv_id IS NOT NULL AND user_id NOT IN (SELECT user_id FROM reordered);

DROP TABLE IF EXISTS touch_universe;

CREATE TEMP TABLE touch_universe AS
SELECT touch_id, user_id, channel, touched_at FROM fresh_touches
UNION ALL
SELECT t.touch_id, t.user_id, t.channel, t.touched_at FROM touch_store AS t
WHERE t.user_id IN (SELECT user_id FROM reordered_keys)
  AND t.user_id IN (SELECT user_id FROM reordered)
UNION ALL
SELECT touch_id, user_id, channel, touched_at FROM stored_state
WHERE touch_id IS NOT NULL AND user_id NOT IN (SELECT user_id FROM reordered);

DROP TABLE IF EXISTS credited;

CREATE TEMP TABLE credited AS
WITH conv AS (
    SELECT *, lag(converted_at) OVER (PARTITION BY user_id
                                      ORDER BY converted_at, conversion_id) AS previous_at
    FROM conv_universe
),
ranked AS (
    SELECT c.conversion_id, t.touch_id, t.channel,
           row_number() OVER (PARTITION BY c.conversion_id
                              ORDER BY t.touched_at DESC, t.touch_id DESC) AS n
    FROM conv AS c
    JOIN touch_universe AS t
      ON t.user_id = c.user_id
     AND t.touched_at <= c.converted_at
     AND t.touched_at >= c.converted_at - INTERVAL '7 days'
     AND (c.previous_at IS NULL OR t.touched_at > c.previous_at)
)
SELECT c.conversion_id, c.user_id, c.converted_at, c.revenue, r.touch_id,
       coalesce(r.channel, 'direct') AS channel
FROM conv AS c LEFT JOIN ranked AS r ON r.conversion_id = c.conversion_id AND r.n = 1
WHERE c.rewrite;

DROP TABLE IF EXISTS last_conversion;

CREATE TEMP TABLE last_conversion AS
SELECT DISTINCT ON (user_id) user_id, converted_at AS conv_at, conversion_id AS conv_id
FROM conv_universe
ORDER BY user_id, converted_at DESC, conversion_id DESC;

DROP TABLE IF EXISTS pending_touch;

CREATE TEMP TABLE pending_touch AS
SELECT DISTINCT ON (t.user_id) t.user_id, t.touch_id, t.touched_at, t.channel
FROM touch_universe AS t LEFT JOIN last_conversion AS c ON c.user_id = t.user_id
WHERE c.conv_at IS NULL OR t.touched_at > c.conv_at
ORDER BY t.user_id, t.touched_at DESC, t.touch_id DESC;

DROP TABLE IF EXISTS new_state;

CREATE TEMP TABLE new_state AS
SELECT u.user_id, greatest(u.last_at, coalesce(s.last_at, u.last_at)) AS last_at,
       c.conv_at, c.conv_id, p.touch_id, p.touched_at, p.channel
FROM users AS u
LEFT JOIN stored_state AS s ON s.user_id = u.user_id
LEFT JOIN last_conversion AS c ON c.user_id = u.user_id
LEFT JOIN pending_touch AS p ON p.user_id = u.user_id;

-- Revenue adds up: each new conversion adds to its day and channel.
DROP TABLE IF EXISTS revenue_delta;

CREATE TEMP TABLE revenue_delta AS
SELECT CAST(converted_at AS DATE) AS day, channel, count(*) AS conversions,
       sum(revenue) AS revenue
FROM credited
WHERE conversion_id IN (SELECT conversion_id FROM fresh_conversions)
GROUP BY CAST(converted_at AS DATE), channel;

DROP TABLE IF EXISTS delta_keys;

CREATE TEMP TABLE delta_keys AS
SELECT DISTINCT day, channel FROM revenue_delta;

DROP TABLE IF EXISTS day_keys;

CREATE TEMP TABLE day_keys AS
SELECT day FROM delta_keys UNION ALL SELECT DATE '1970-01-01';

DROP TABLE IF EXISTS new_revenue;

CREATE TEMP TABLE new_revenue AS
SELECT day, channel, CAST(sum(conversions) AS BIGINT) AS conversions,
       CAST(sum(revenue) AS DECIMAL(12,2)) AS revenue
FROM (
    SELECT r.day, r.channel, r.conversions, r.revenue
    FROM channel_daily_revenue AS r
    WHERE r.day IN (SELECT day FROM day_keys)
      AND (r.day, r.channel) IN (SELECT day, channel FROM delta_keys)
    UNION ALL
    SELECT day, channel, conversions, revenue FROM revenue_delta
) AS parts
GROUP BY day, channel;

DELETE FROM conversion_attribution
WHERE user_id IN (SELECT user_id FROM reordered_keys)
  AND conversion_id IN (SELECT conversion_id FROM old_conversions);

INSERT INTO conversion_attribution
SELECT conversion_id, user_id, converted_at, revenue, touch_id, channel FROM credited;

DELETE FROM channel_daily_revenue
WHERE day IN (SELECT day FROM day_keys)
  AND (day, channel) IN (SELECT day, channel FROM delta_keys);

INSERT INTO channel_daily_revenue
SELECT day, channel, conversions, revenue FROM new_revenue WHERE conversions > 0;

INSERT INTO touch_store SELECT touch_id, user_id, channel, touched_at FROM fresh_touches;

DELETE FROM user_state
WHERE user_id IN (SELECT user_id FROM user_keys)
  AND user_id IN (SELECT user_id FROM users);

INSERT INTO user_state
SELECT user_id, last_at, conv_at, conv_id, touch_id, touched_at, channel FROM new_state;

COMMIT;
