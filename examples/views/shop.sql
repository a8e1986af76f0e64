-- The example of docs/views.md ("mallard sql"), as one script.
-- Run: ./mallard sql shop.duckdb < examples/views/shop.sql
CREATE TABLE sales (region VARCHAR, amount INTEGER);
INSERT INTO sales VALUES ('north', 5), ('south', 7);
CREATE MATERIALIZED VIEW totals AS SELECT region, sum(amount) AS total FROM sales GROUP BY region;
INSERT INTO sales VALUES ('north', 1);
SELECT * FROM totals ORDER BY region;
