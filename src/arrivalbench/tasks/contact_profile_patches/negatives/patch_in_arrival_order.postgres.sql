-- One transaction per batch: the updates not applied before are folded (in version order) into
-- each stored profile, field by field, and counted.
BEGIN TRANSACTION;

CREATE TABLE IF NOT EXISTS applied_updates (update_id BIGINT PRIMARY KEY);

CREATE TABLE IF NOT EXISTS contact_profiles (
    contact_id       INTEGER PRIMARY KEY,
    email            TEXT,
    phone            TEXT,
    company          TEXT,
    marketing_opt_in BOOLEAN,
    revisions        BIGINT,
    last_updated_at  TIMESTAMP
);

CREATE TEMP TABLE fresh AS
SELECT DISTINCT update_id, contact_id, version, email, phone, company, marketing_opt_in,
       updated_at
FROM incoming.contact_updates
WHERE update_id NOT IN (SELECT update_id FROM applied_updates);

INSERT INTO contact_profiles AS p
SELECT
    contact_id,
    (array_agg(email ORDER BY version DESC NULLS LAST) FILTER (WHERE email IS NOT NULL))[1],
    (array_agg(phone ORDER BY version DESC NULLS LAST) FILTER (WHERE phone IS NOT NULL))[1],
    (array_agg(company ORDER BY version DESC NULLS LAST) FILTER (WHERE company IS NOT NULL))[1],
    (array_agg(marketing_opt_in ORDER BY version DESC NULLS LAST) FILTER (WHERE marketing_opt_in IS NOT NULL))[1],
    count(*),
    (array_agg(updated_at ORDER BY version DESC NULLS LAST)
         FILTER (WHERE updated_at IS NOT NULL))[1]
FROM fresh
GROUP BY contact_id
ON CONFLICT (contact_id) DO UPDATE SET
    email            = COALESCE(EXCLUDED.email, p.email),
    phone            = COALESCE(EXCLUDED.phone, p.phone),
    company          = COALESCE(EXCLUDED.company, p.company),
    marketing_opt_in = COALESCE(EXCLUDED.marketing_opt_in, p.marketing_opt_in),
    revisions        = p.revisions + EXCLUDED.revisions,
    last_updated_at  = EXCLUDED.last_updated_at;

INSERT INTO applied_updates SELECT update_id FROM fresh;

COMMIT;
