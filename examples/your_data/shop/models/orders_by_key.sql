-- Correct: every new row is merged on its key, whatever its time; a row sent twice in one
-- batch is kept once.
{{ config(materialized='incremental', unique_key='order_id',
          incremental_strategy='delete+insert') }}

select order_id, store_id, amount, ordered_at, cast(ordered_at as date) as order_date
from {{ source('shop', 'orders') }}
qualify row_number() over (partition by order_id order by ordered_at) = 1
