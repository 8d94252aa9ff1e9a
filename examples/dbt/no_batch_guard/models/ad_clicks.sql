-- Replace every delivered click by its key: a click sent again in a later batch replaces
-- itself, but nothing makes the rows of one batch unique, so a click sent twice in the same
-- batch is inserted twice.
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
