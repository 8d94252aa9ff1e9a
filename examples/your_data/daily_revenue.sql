-- Revenue and order count per store and calendar day, over every order ever received.
SELECT store_id, CAST(ordered_at AS DATE) AS day,
       CAST(sum(amount) AS DECIMAL(12,2)) AS revenue, count(*) AS orders
FROM orders
GROUP BY ALL
