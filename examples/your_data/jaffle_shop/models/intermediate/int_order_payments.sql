-- Correct: an order's paid total, recomputed on an incremental run for every order that got a
-- payment since the last run, over all of that order's payments.
{{ config(materialized='incremental', unique_key='order_id',
          incremental_strategy='delete+insert') }}

select order_id, sum(amount) as paid, count(*) as payments, max(paid_at) as last_paid_at,
       max(_landed_at) as _landed_at
from {{ ref('stg_payments') }}
{% if is_incremental() %}
where order_id in (select order_id from {{ ref('stg_payments') }}
                   where _landed_at > (select max(_landed_at) from {{ this }}))
{% endif %}
group by order_id
