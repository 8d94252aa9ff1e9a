-- Wrong: a high-water mark inside a microbatch model. dbt deletes each day it rebuilds before
-- it inserts the day again, and the filter keeps only orders newer than the newest one built:
-- the days it re-reads lose their orders, on-time ones included, well inside its lookback.
{{ config(materialized='incremental', incremental_strategy='microbatch',
          event_time='ordered_at', batch_size='day', lookback=1, begin='2024-03-01',
          meta={'arrivalbench': {'unique_key': 'order_id'}}) }}

select order_id, store_id, amount, ordered_at, cast(ordered_at as date) as order_date
from {{ source('shop', 'orders') }}
{% if is_incremental() %}
where ordered_at > (select coalesce(max(ordered_at), '1900-01-01') from {{ this }})
{% endif %}
qualify row_number() over (partition by order_id order by ordered_at) = 1
