-- Views over views, and the statements' spelling: CREATE / REFRESH / DROP MATERIALIZED VIEW.
-- Run: ./mallard sql shop.duckdb < examples/views/cascading.sql
CREATE TABLE sales (region VARCHAR, amount INTEGER);
INSERT INTO sales VALUES ('north', 5), ('south', 7), ('north', 30);

CREATE MATERIALIZED VIEW totals AS SELECT region, sum(amount) AS total FROM sales GROUP BY region;
CREATE MATERIALIZED VIEW big_regions AS SELECT region FROM totals WHERE total > 10;
SELECT * FROM dbsp_create_view('big_count', 'SELECT count(*) AS regions FROM big_regions');

INSERT INTO sales VALUES ('south', 9), ('east', 1);
SELECT * FROM totals ORDER BY region;
SELECT * FROM big_regions ORDER BY region;
SELECT * FROM big_count;

REFRESH MATERIALIZED VIEW totals;
SELECT view, differing_rows FROM dbsp_check() ORDER BY view;

SELECT dbsp_drop_cascade('totals');
SELECT count(*) AS views_left FROM mallard_views.views;
