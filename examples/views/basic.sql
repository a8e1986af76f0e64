-- Materialized views through the dbsp_* functions, in the seed's (DBSP for DuckDB's) spelling.
-- Run: ./mallard sql shop.duckdb < examples/views/basic.sql
CREATE TABLE orders (id INTEGER, customer VARCHAR, product VARCHAR, amount DECIMAL(10,2));
INSERT INTO orders VALUES
    (1, 'Ada', 'lamp', 40.00),
    (2, 'Ben', 'desk', 250.00),
    (3, 'Ada', 'lamp', 40.00),
    (4, 'Cleo', 'chair', 120.00);

SELECT * FROM dbsp_track('orders');

SELECT * FROM dbsp_create_view('large_orders', 'SELECT id, customer, amount FROM orders WHERE amount > 100');
SELECT * FROM dbsp_create_view('spend', 'SELECT customer, sum(amount) AS total, count(*) AS n FROM orders GROUP BY customer');
SELECT * FROM dbsp_create_view('buyers', 'SELECT DISTINCT customer FROM orders');

SELECT * FROM dbsp_query('large_orders') ORDER BY id;
SELECT * FROM dbsp_query('spend') ORDER BY customer;

INSERT INTO orders VALUES (5, 'Ada', 'sofa', 900.00);
SELECT * FROM dbsp_sync('orders');
SELECT * FROM dbsp_query('spend') ORDER BY customer;

DELETE FROM orders WHERE id = 4;
SELECT * FROM dbsp_sync();
SELECT * FROM dbsp_query('buyers') ORDER BY customer;
SELECT * FROM large_orders ORDER BY id;

SELECT dbsp_drop('large_orders');
SELECT dbsp_drop('spend');
SELECT dbsp_drop('buyers');
DROP TABLE orders;
