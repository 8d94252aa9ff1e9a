-- Correct: on an incremental run, take what the loader landed since the last run and merge it
-- on the key; a row landed twice is kept once.
{{ config(materialized='incremental', unique_key='order_id',
          incremental_strategy='delete+insert') }}

select order_id, customer_id, ordered_at, status, _landed_at
from {{ source('jaffle', 'raw_orders') }}
{% if is_incremental() %}
where _landed_at > (select max(_landed_at) from {{ this }})
{% endif %}
qualify row_number() over (partition by order_id order by _landed_at) = 1
