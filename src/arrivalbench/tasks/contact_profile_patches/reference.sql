SELECT
    contact_id,
    arg_max(email, version) FILTER (WHERE email IS NOT NULL)                       AS email,
    arg_max(phone, version) FILTER (WHERE phone IS NOT NULL)                       AS phone,
    arg_max(company, version) FILTER (WHERE company IS NOT NULL)                   AS company,
    arg_max(marketing_opt_in, version) FILTER (WHERE marketing_opt_in IS NOT NULL) AS marketing_opt_in,
    count(*)                                                                       AS revisions,
    arg_max(updated_at, version)                                                   AS last_updated_at
FROM contact_updates
GROUP BY contact_id
