-- A view: the customers as they are.
{{ config(materialized='view') }}

select customer_id, name, signed_up_at
from {{ source('jaffle', 'raw_customers') }}
qualify row_number() over (partition by customer_id order by _landed_at) = 1
