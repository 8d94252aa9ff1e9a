-- dbt's microbatch strategy: each run rebuilds the days of the event-time window it looks at.
{{ config(materialized='incremental', incremental_strategy='microbatch',
          event_time='ordered_at', begin='2024-03-01', batch_size='day', lookback=1,
          unique_key='order_id') }}

select order_id, store_id, amount, ordered_at, cast(ordered_at as date) as order_date
from {{ source('shop', 'orders') }}
