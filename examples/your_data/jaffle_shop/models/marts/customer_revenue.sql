-- A table, rebuilt on every run from the orders mart: right whenever fct_orders is.
{{ config(materialized='table') }}

select c.customer_id, c.name, count(f.order_id) as orders, coalesce(sum(f.paid), 0) as paid
from {{ ref('stg_customers') }} as c
left join {{ ref('fct_orders') }} as f using (customer_id)
group by c.customer_id, c.name
