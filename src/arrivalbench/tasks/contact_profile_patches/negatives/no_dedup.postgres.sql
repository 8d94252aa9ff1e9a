-- Every delivered update lands as it comes; the profiles are recomputed from the landing table.
CREATE TABLE IF NOT EXISTS updates_landing (
    update_id        BIGINT,
    contact_id       INTEGER,
    version          INTEGER,
    email            TEXT,
    phone            TEXT,
    company          TEXT,
    marketing_opt_in BOOLEAN,
    updated_at       TIMESTAMP
);

INSERT INTO updates_landing
SELECT update_id, contact_id, version, email, phone, company, marketing_opt_in, updated_at
FROM incoming.contact_updates;

DROP TABLE IF EXISTS contact_profiles;

CREATE TABLE contact_profiles AS
SELECT
    contact_id,
    (array_agg(email ORDER BY version DESC NULLS LAST) FILTER (WHERE email IS NOT NULL))[1] AS email,
    (array_agg(phone ORDER BY version DESC NULLS LAST) FILTER (WHERE phone IS NOT NULL))[1] AS phone,
    (array_agg(company ORDER BY version DESC NULLS LAST) FILTER (WHERE company IS NOT NULL))[1] AS company,
    (array_agg(marketing_opt_in ORDER BY version DESC NULLS LAST) FILTER (WHERE marketing_opt_in IS NOT NULL))[1] AS marketing_opt_in,
    count(*) AS revisions,
    (array_agg(updated_at ORDER BY version DESC NULLS LAST)
        FILTER (WHERE updated_at IS NOT NULL))[1] AS last_updated_at
FROM updates_landing
GROUP BY contact_id;
