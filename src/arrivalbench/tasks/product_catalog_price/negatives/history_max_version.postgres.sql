-- Keep every price change received; a product's price is the change with its highest price
-- version.
CREATE TABLE IF NOT EXISTS price_change_log (
    price_change_id BIGINT,
    sku             VARCHAR,
    price_version   INTEGER,
    list_price      DECIMAL(10,2),
    sale_price      DECIMAL(10,2),
    currency        VARCHAR,
    changed_at      TIMESTAMP
);

INSERT INTO price_change_log
SELECT price_change_id, sku, price_version, list_price, sale_price, currency, changed_at
FROM incoming.price_changes;

DROP TABLE IF EXISTS product_prices;

CREATE TABLE product_prices AS
SELECT
    l.sku,
    l.list_price,
    l.sale_price,
    COALESCE(l.sale_price, l.list_price) AS effective_price,
    l.currency,
    l.price_version,
    l.changed_at
FROM price_change_log AS l
JOIN (SELECT sku, max(price_version) AS price_version FROM price_change_log GROUP BY sku) AS m
  USING (sku, price_version);
