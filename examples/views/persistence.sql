-- Save the view set to a file; load.sql builds it in another database.
-- Run: ./mallard sql first.duckdb < examples/views/persistence.sql
CREATE TABLE orders (id INTEGER, customer VARCHAR, amount DECIMAL(10,2));
INSERT INTO orders VALUES (1, 'Ada', 40.00), (2, 'Ben', 250.00);
CREATE TABLE products (id INTEGER, name VARCHAR);
SELECT * FROM dbsp_track('products');
SELECT * FROM dbsp_create_view('spend', 'SELECT customer, sum(amount) AS total FROM orders GROUP BY customer');
CREATE MATERIALIZED VIEW big_spenders AS SELECT customer FROM spend WHERE total > 100;
SELECT * FROM dbsp_autopersist();
SELECT * FROM dbsp_save('views.json');
