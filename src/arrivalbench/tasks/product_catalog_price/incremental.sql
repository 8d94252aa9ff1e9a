-- Incremental: the target is the state itself, keyed on the SKU. Each run offers the batch's
-- highest price version per SKU, and the primary key's conflict check reads only the stored
-- rows of the SKUs the batch mentions; a stored row is replaced only by a higher version, so
-- duplicates, retries and late changes change nothing they should not.
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
FROM incoming.price_changes
QUALIFY row_number() OVER (PARTITION BY sku ORDER BY price_version DESC) = 1
ON CONFLICT (sku) DO UPDATE SET
    list_price      = EXCLUDED.list_price,
    sale_price      = EXCLUDED.sale_price,
    effective_price = EXCLUDED.effective_price,
    currency        = EXCLUDED.currency,
    price_version   = EXCLUDED.price_version,
    changed_at      = EXCLUDED.changed_at
WHERE EXCLUDED.price_version > p.price_version;
