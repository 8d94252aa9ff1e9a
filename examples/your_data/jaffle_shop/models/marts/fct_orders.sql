-- Wrong downstream of correct models: on an incremental run it takes only orders at least as
-- new as the newest it holds, so a payment that settles an older order later never reaches
-- that order's row here (nor does an order that lands late).
{{ config(materialized='incremental', unique_key='order_id',
          incremental_strategy='delete+insert') }}

select o.order_id, o.customer_id, o.ordered_at, o.status,
       coalesce(p.paid, 0) as paid, coalesce(p.payments, 0) as payments
from {{ ref('stg_orders') }} as o
left join {{ ref('int_order_payments') }} as p using (order_id)
{% if is_incremental() %}
where o.ordered_at >= (select max(ordered_at) from {{ this }})
{% endif %}
