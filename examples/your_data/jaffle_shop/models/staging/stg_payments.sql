-- Correct, as stg_orders: what landed since the last run, merged on the key.
{{ config(materialized='incremental', unique_key='payment_id',
          incremental_strategy='delete+insert') }}

select payment_id, order_id, method, amount, paid_at, _landed_at
from {{ source('jaffle', 'raw_payments') }}
{% if is_incremental() %}
where _landed_at > (select max(_landed_at) from {{ this }})
{% endif %}
qualify row_number() over (partition by payment_id order by _landed_at) = 1
