-- Land every delivered sample, then recompute the hourly statistics from the landing table.
CREATE TABLE IF NOT EXISTS samples_landing (
    sample_id   BIGINT,
    meter_id    VARCHAR,
    power_kw    DOUBLE PRECISION,
    measured_at TIMESTAMP
);

INSERT INTO samples_landing
SELECT sample_id, meter_id, power_kw, measured_at FROM incoming.power_samples;

DROP TABLE IF EXISTS meter_hourly_power;

CREATE TABLE meter_hourly_power AS
SELECT
    meter_id,
    date_trunc('hour', measured_at) AS hour,
    count(*)                        AS samples,
    avg(power_kw)                   AS avg_kw,
    min(power_kw)                   AS min_kw,
    max(power_kw)                   AS max_kw
FROM samples_landing
GROUP BY meter_id, date_trunc('hour', measured_at);
