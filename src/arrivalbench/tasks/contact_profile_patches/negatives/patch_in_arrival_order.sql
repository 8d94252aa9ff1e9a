-- One transaction per batch: the updates not applied before are folded (in version order) into
-- each stored profile, field by field, and counted.
BEGIN TRANSACTION;

CREATE TABLE IF NOT EXISTS applied_updates (update_id BIGINT PRIMARY KEY);

CREATE TABLE IF NOT EXISTS contact_profiles (
    contact_id       INTEGER PRIMARY KEY,
    email            VARCHAR,
    phone            VARCHAR,
    company          VARCHAR,
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
    arg_max(email, version) FILTER (WHERE email IS NOT NULL),
    arg_max(phone, version) FILTER (WHERE phone IS NOT NULL),
    arg_max(company, version) FILTER (WHERE company IS NOT NULL),
    arg_max(marketing_opt_in, version) FILTER (WHERE marketing_opt_in IS NOT NULL),
    count(*),
    arg_max(updated_at, version)
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
