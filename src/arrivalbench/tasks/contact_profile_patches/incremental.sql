-- Incremental: applied_updates keeps the id of every update folded in, keyed, so a run reads
-- only the ids its batch repeats; contact_state keeps, per contact and per field, the value
-- and the version it came from. The batch's other updates fold into the state of the contacts
-- they touch (a field takes the value of the higher version that carries one), and only those
-- contacts are read and rewritten. Everything commits together: a retried batch finds its
-- updates applied.
CREATE TABLE IF NOT EXISTS applied_updates (update_id BIGINT PRIMARY KEY);

CREATE TABLE IF NOT EXISTS contact_state (
    contact_id        INTEGER PRIMARY KEY,
    email             VARCHAR,
    email_version     INTEGER,
    phone             VARCHAR,
    phone_version     INTEGER,
    company           VARCHAR,
    company_version   INTEGER,
    opt_in            BOOLEAN,
    opt_in_version    INTEGER,
    revisions         BIGINT,
    last_version      INTEGER,
    last_updated_at   TIMESTAMP
);

CREATE TABLE IF NOT EXISTS contact_profiles (
    contact_id       INTEGER PRIMARY KEY,
    email            VARCHAR,
    phone            VARCHAR,
    company          VARCHAR,
    marketing_opt_in BOOLEAN,
    revisions        BIGINT,
    last_updated_at  TIMESTAMP
);

-- No key list a lookup joins against is ever empty (an empty one looks up 0): DuckDB pushes
-- the keys of a join's small side into the scan of the stored table, but from an empty side it
-- pushes nothing and reads the table whole. The deletes also require the key to be a real one,
-- so that a stored key 0 is never deleted by mistake.
CREATE OR REPLACE TEMP TABLE batch_ids AS
SELECT update_id FROM incoming.contact_updates
UNION ALL SELECT coalesce(min(update_id), 0) FROM incoming.contact_updates;

CREATE OR REPLACE TEMP TABLE known AS
SELECT a.update_id FROM applied_updates AS a WHERE a.update_id IN (SELECT update_id FROM batch_ids);

CREATE OR REPLACE TEMP TABLE fresh AS
SELECT DISTINCT ON (update_id) update_id, contact_id, version, email, phone, company,
       marketing_opt_in, updated_at
FROM incoming.contact_updates
WHERE update_id NOT IN (SELECT update_id FROM known)
ORDER BY update_id;

-- The batch's own fold, per contact, in the state's shape.
CREATE OR REPLACE TEMP TABLE delta AS
SELECT contact_id,
       arg_max(email, version) FILTER (WHERE email IS NOT NULL)     AS email,
       max(version) FILTER (WHERE email IS NOT NULL)                AS email_version,
       arg_max(phone, version) FILTER (WHERE phone IS NOT NULL)     AS phone,
       max(version) FILTER (WHERE phone IS NOT NULL)                AS phone_version,
       arg_max(company, version) FILTER (WHERE company IS NOT NULL) AS company,
       max(version) FILTER (WHERE company IS NOT NULL)              AS company_version,
       arg_max(marketing_opt_in, version) FILTER (WHERE marketing_opt_in IS NOT NULL) AS opt_in,
       max(version) FILTER (WHERE marketing_opt_in IS NOT NULL)     AS opt_in_version,
       count(*)                                                     AS revisions,
       max(version)                                                 AS last_version,
       arg_max(updated_at, version)                                 AS last_updated_at
FROM fresh
GROUP BY contact_id;

CREATE OR REPLACE TEMP TABLE contact_keys AS
SELECT contact_id FROM delta UNION ALL SELECT coalesce(min(contact_id), 0) FROM delta;

CREATE OR REPLACE TEMP TABLE stored AS
SELECT s.* FROM contact_state AS s WHERE s.contact_id IN (SELECT contact_id FROM contact_keys);

-- A field keeps the stored value unless the batch carries one from a higher version.
CREATE OR REPLACE TEMP TABLE now AS
SELECT d.contact_id,
       CASE WHEN d.email_version > COALESCE(s.email_version, 0) THEN d.email ELSE s.email END AS email,
       greatest(d.email_version, s.email_version) AS email_version,
       CASE WHEN d.phone_version > COALESCE(s.phone_version, 0) THEN d.phone ELSE s.phone END AS phone,
       greatest(d.phone_version, s.phone_version) AS phone_version,
       CASE WHEN d.company_version > COALESCE(s.company_version, 0) THEN d.company
            ELSE s.company END AS company,
       greatest(d.company_version, s.company_version) AS company_version,
       CASE WHEN d.opt_in_version > COALESCE(s.opt_in_version, 0) THEN d.opt_in
            ELSE s.opt_in END AS opt_in,
       greatest(d.opt_in_version, s.opt_in_version) AS opt_in_version,
       d.revisions + COALESCE(s.revisions, 0) AS revisions,
       greatest(d.last_version, s.last_version) AS last_version,
       CASE WHEN d.last_version > COALESCE(s.last_version, 0) THEN d.last_updated_at
            ELSE s.last_updated_at END AS last_updated_at
FROM delta AS d LEFT JOIN stored AS s USING (contact_id);

BEGIN TRANSACTION;

INSERT INTO applied_updates SELECT update_id FROM fresh;

DELETE FROM contact_state
WHERE contact_id IN (SELECT contact_id FROM contact_keys)
  AND contact_id IN (SELECT contact_id FROM now);

INSERT INTO contact_state SELECT * FROM now;

DELETE FROM contact_profiles
WHERE contact_id IN (SELECT contact_id FROM contact_keys)
  AND contact_id IN (SELECT contact_id FROM now);

INSERT INTO contact_profiles
SELECT contact_id, email, phone, company, opt_in, revisions, last_updated_at FROM now;

COMMIT;
