-- Replace every delivered click by its key, keeping one row per click of the batch: late,
-- out-of-order, repeated and re-sent clicks all end as one row each.
{{ config(materialized='incremental', unique_key='click_id',
          incremental_strategy='delete+insert') }}

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
qualify row_number() over (partition by click_id order by clicked_at) = 1
