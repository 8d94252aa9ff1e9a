-- Versioned upsert keyed by SKU: a change replaces the stored price only when its price
-- version is higher than the stored one.
CREATE TABLE IF NOT EXISTS product_prices (
    sku             VARCHAR PRIMARY KEY,
    list_price      DECIMAL(10,2),
    sale_price      DECIMAL(10,2),
    effective_price DECIMAL(10,2),
    currency        VARCHAR,
    price_version   INTEGER,
    changed_at      TIMESTAMP
);

INSERT INTO product_prices AS p
SELECT sku, list_price, sale_price, COALESCE(sale_price, list_price), currency, price_version,
       changed_at
FROM (
    SELECT *, row_number() OVER (PARTITION BY sku ORDER BY price_version DESC NULLS LAST) AS rn
    FROM incoming.price_changes
) AS c
WHERE rn = 1
ON CONFLICT (sku) DO UPDATE SET
    list_price      = EXCLUDED.list_price,
    sale_price      = EXCLUDED.sale_price,
    effective_price = EXCLUDED.effective_price,
    currency        = EXCLUDED.currency,
    price_version   = EXCLUDED.price_version,
    changed_at      = EXCLUDED.changed_at
WHERE EXCLUDED.price_version > p.price_version;
