-- dbt's documented incremental filter: on an incremental run, keep only the rows at least as
-- new as the newest row already in the table. An order that arrives after a newer one is never
-- loaded.
{{ config(materialized='incremental', unique_key='order_id') }}

select order_id, store_id, amount, ordered_at, cast(ordered_at as date) as order_date
from {{ source('shop', 'orders') }}
{% if is_incremental() %}
where ordered_at >= (select coalesce(max(ordered_at), '1900-01-01') from {{ this }})
{% endif %}
qualify row_number() over (partition by order_id order by ordered_at) = 1
