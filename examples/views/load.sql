-- Build the view set persistence.sql saved, over this database's own rows.
-- Run: ./mallard sql second.duckdb < examples/views/load.sql
CREATE TABLE orders (id INTEGER, customer VARCHAR, amount DECIMAL(10,2));
INSERT INTO orders VALUES (7, 'Cleo', 500.00), (8, 'Dan', 3.00);
CREATE TABLE products (id INTEGER, name VARCHAR);
SELECT * FROM dbsp_load('views.json', 'json');
SELECT name FROM mallard_views.views ORDER BY position;
SELECT * FROM big_spenders;
INSERT INTO orders VALUES (9, 'Dan', 200.00);
SELECT * FROM big_spenders ORDER BY customer;
