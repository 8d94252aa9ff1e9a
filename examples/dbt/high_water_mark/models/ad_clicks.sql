-- The pattern of dbt's documentation on incremental models: on an incremental run, take
-- only the rows at least as new as the newest row already in the table (>=, with a unique_key,
-- so that a row sharing the newest timestamp is not lost).
{{ config(materialized='incremental', unique_key='click_id') }}

select
    click_id,
    campaign_id,
    creative_id,
    lower(trim(placement)) as placement,
    cast(cpc_micros as decimal(18, 6)) / 1000000 as cost,
    coalesce(regexp_matches(user_agent, '(?i)bot|crawler|spider'), false) as is_bot,
    clicked_at,
    cast(clicked_at as date) as click_date
from {{ source('incoming', 'clicks') }}
{% if is_incremental() %}
where clicked_at >= (select coalesce(max(clicked_at), '1900-01-01') from {{ this }})
{% endif %}
qualify row_number() over (partition by click_id order by clicked_at) = 1
