-- The runtime settings: auto-sync off for a bulk load, a memory bound and threads for syncs, timings in the log.
-- Run: ./mallard sql shop.duckdb < examples/views/settings.sql
CREATE TABLE events (city VARCHAR, n BIGINT);
CREATE MATERIALIZED VIEW city_totals AS SELECT city, count(*) AS events, sum(n) AS total FROM events GROUP BY city;
SELECT * FROM dbsp_auto_sync(false);
INSERT INTO events SELECT 'city' || (range % 3), range FROM range(1000);
SELECT * FROM dbsp_auto_sync();
SELECT * FROM dbsp_spill('64MB');
SELECT * FROM dbsp_parallel(2);
SELECT * FROM dbsp_timing(true);
SELECT * FROM dbsp_sync();
SELECT * FROM dbsp_auto_sync(true);
SELECT * FROM city_totals ORDER BY city;
SELECT * FROM dbsp_spill(false);
SELECT * FROM dbsp_parallel(false);
SELECT * FROM dbsp_timing(false);
