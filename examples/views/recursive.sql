-- A recursive view over a graph with a cycle: UNION keeps r a set, so the recursion ends.
-- Run: ./mallard sql graph.duckdb < examples/views/recursive.sql
CREATE TABLE edges (src INTEGER, dst INTEGER);
INSERT INTO edges VALUES (1, 2), (2, 3), (3, 1), (4, 5);

CREATE MATERIALIZED VIEW reach AS
    WITH RECURSIVE r(a, b) AS (
        SELECT src, dst FROM edges
        UNION
        SELECT r.a, e.dst FROM r JOIN edges e ON r.b = e.src)
    SELECT a, b FROM r;
SELECT count(*) AS pairs FROM reach;

INSERT INTO edges VALUES (5, 1);
SELECT b FROM reach WHERE a = 4 ORDER BY b;

DELETE FROM edges WHERE src = 3;
SELECT a, b FROM reach ORDER BY a, b;

-- A path length over a cycle never ends; the recursion limit stops it (user.view.recursion_unbounded).
SELECT * FROM dbsp_recursion_limit();
