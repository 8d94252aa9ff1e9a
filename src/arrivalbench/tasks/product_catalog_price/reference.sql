SELECT
    sku,
    list_price,
    sale_price,
    COALESCE(sale_price, list_price) AS effective_price,
    currency,
    price_version,
    changed_at
FROM price_changes
QUALIFY row_number() OVER (PARTITION BY sku ORDER BY price_version DESC) = 1
