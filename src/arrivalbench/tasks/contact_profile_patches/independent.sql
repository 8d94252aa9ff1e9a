SELECT CAST(contact_id AS INTEGER) AS contact_id,
       CAST(arg_max(email, version) FILTER (WHERE email IS NOT NULL) AS VARCHAR) AS email,
       CAST(arg_max(phone, version) FILTER (WHERE phone IS NOT NULL) AS VARCHAR) AS phone,
       CAST(arg_max(company, version) FILTER (WHERE company IS NOT NULL) AS VARCHAR) AS company,
       CAST(arg_max(marketing_opt_in, version) FILTER (WHERE marketing_opt_in IS NOT NULL) AS BOOLEAN) AS marketing_opt_in,
       CAST(count(*) AS BIGINT) AS revisions,
       CAST(arg_max(updated_at, version) AS TIMESTAMP) AS last_updated_at
FROM contact_updates
GROUP BY contact_id
ORDER BY contact_id
