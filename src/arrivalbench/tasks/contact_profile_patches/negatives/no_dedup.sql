-- Every delivered update lands as it comes; the profiles are recomputed from the landing table.
CREATE TABLE IF NOT EXISTS updates_landing (
    update_id        BIGINT,
    contact_id       INTEGER,
    version          INTEGER,
    email            VARCHAR,
    phone            VARCHAR,
    company          VARCHAR,
    marketing_opt_in BOOLEAN,
    updated_at       TIMESTAMP
);

INSERT INTO updates_landing
SELECT update_id, contact_id, version, email, phone, company, marketing_opt_in, updated_at
FROM incoming.contact_updates;

CREATE OR REPLACE TABLE contact_profiles AS
SELECT
    contact_id,
    arg_max(email, version) FILTER (WHERE email IS NOT NULL)                       AS email,
    arg_max(phone, version) FILTER (WHERE phone IS NOT NULL)                       AS phone,
    arg_max(company, version) FILTER (WHERE company IS NOT NULL)                   AS company,
    arg_max(marketing_opt_in, version) FILTER (WHERE marketing_opt_in IS NOT NULL) AS marketing_opt_in,
    count(*)                                                                       AS revisions,
    arg_max(updated_at, version)                                                   AS last_updated_at
FROM updates_landing
GROUP BY contact_id;
