-- 13_partitions: the partitioned fixpoint (issue 14) through SQL.  With
-- gpudl.partitions = 3 a run is spread over three backend contexts (on the
-- CPU here, as on one GPU), tuples exchanged between them; every predicate
-- of a program with linear, non-linear (made linear, and as written) and mutual recursion, same
-- generation, negation and aggregates gives the rows of gpudl.partitions =
-- 1.  EXPLAIN ANALYZE shows a line per partition; gpudl_device_info() a row
-- per partition of the last partitioned run.
CREATE SCHEMA t13;
SET search_path = t13, public;
SET client_min_messages = warning;
SET gpudl.device = cpu;
CREATE TABLE edge(a int, b int);
CREATE TABLE node(n int);
-- a fixed graph: three chains, forward links between them, two cycles
INSERT INTO edge SELECT g, g + 1 FROM generate_series(1, 30) g WHERE g % 10 <> 0;
INSERT INTO edge SELECT g, g + 12 FROM generate_series(1, 18, 4) g;
INSERT INTO edge VALUES (10, 5), (25, 21);
INSERT INTO node SELECT DISTINCT a FROM edge UNION SELECT b FROM edge;

SELECT gpudl_create_program('part13', $$
  tc(X, Y) :- edge(X, Y).
  tc(X, Z) :- tc(X, Y), edge(Y, Z).
  ltc(X, Y) :- edge(X, Y).
  ltc(X, Z) :- edge(X, Y), ltc(Y, Z).
  nl(X, Y) :- edge(X, Y).
  nl(X, Z) :- nl(X, Y), nl(Y, Z).
  nlx(X, Y) :- edge(X, Y).
  nlx(X, Z) :- nlx(X, Y), nlx(Y, Z), X != Z.
  sg(X, Y) :- edge(P, X), edge(P, Y), X != Y.
  sg(X, Y) :- edge(A, X), sg(A, B), edge(B, Y).
  odd(X, Y) :- edge(X, Y).
  odd(X, Z) :- ev(X, Y), edge(Y, Z).
  ev(X, Z) :- odd(X, Y), edge(Y, Z).
  unreach(X, Y) :- node(X), node(Y), !tc(X, Y).
  reach(X, count(Y)) :- tc(X, Y).
$$) IS NOT NULL AS created;

CREATE TABLE goals(goal text, cols text);
INSERT INTO goals VALUES ('tc(X, Y)', 'a int, b int'), ('ltc(X, Y)', 'a int, b int'),
  ('nl(X, Y)', 'a int, b int'), ('nlx(X, Y)', 'a int, b int'), ('sg(X, Y)', 'a int, b int'), ('odd(X, Y)', 'a int, b int'),
  ('ev(X, Y)', 'a int, b int'), ('unreach(X, Y)', 'a int, b int'), ('reach(X, N)', 'a int, n bigint'),
  ('tc(5, Y)', 'a int, b int');

-- the rows of every goal with 1 partition, then with 2, 3 and 4
CREATE TABLE answers(parts int, goal text, a int, b bigint);
DO $$
DECLARE g record; p int;
BEGIN
  FOREACH p IN ARRAY ARRAY[1, 2, 3, 4] LOOP
    PERFORM set_config('gpudl.partitions', p::text, false);
    FOR g IN SELECT * FROM goals LOOP
      EXECUTE format('INSERT INTO answers SELECT %s, %L, * FROM gpudl_query(''part13'', %L) AS t(%s)',
                     p, g.goal, g.goal, g.cols);
    END LOOP;
  END LOOP;
END $$;
RESET gpudl.partitions;
-- rows that differ from the 1-partition answer (duplicates count too)
WITH c AS (SELECT parts, goal, a, b, count(*) AS n FROM answers GROUP BY 1, 2, 3, 4),
     bad AS (SELECT coalesce(x.goal, y.goal) AS goal, count(*) AS n
             FROM (SELECT * FROM c WHERE parts > 1) x
             FULL JOIN (SELECT p.parts, c.goal, c.a, c.b, c.n FROM c CROSS JOIN (VALUES (2), (3), (4)) p(parts)
                        WHERE c.parts = 1) y
               ON x.parts = y.parts AND x.goal = y.goal AND x.a = y.a AND x.b = y.b AND x.n = y.n
             WHERE x.goal IS NULL OR y.goal IS NULL GROUP BY 1)
SELECT g.goal, (SELECT count(*) FROM answers WHERE parts = 1 AND goal = g.goal) AS rows_1,
       coalesce(bad.n, 0) AS differing_rows_2_3_4
FROM goals g LEFT JOIN bad USING (goal) ORDER BY g.goal COLLATE "C";

-- EXPLAIN ANALYZE: a line per partition (tuples and bytes are the same on every machine);
-- nl is a closure written non-linearly, which runs linearly (the edges
-- replicated, nothing to exchange), nlx really non-linear (tuples exchanged)
SET gpudl.explain_machine_details = off;
SET gpudl.partitions = 3;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
  SELECT * FROM gpudl_query('part13', 'nl(X, Y)') AS t(a int, b int);
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
  SELECT * FROM gpudl_query('part13', 'nlx(X, Y)') AS t(a int, b int);
-- an aggregate runs unpartitioned: no partition lines
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
  SELECT * FROM gpudl_query('part13', 'reach(X, N)') AS t(a int, n bigint);
-- gpudl_device_info: the partitions of the last partitioned run
SELECT count(*) FROM gpudl_query('part13', 'sg(X, Y)') AS t(a int, b int);
SELECT backend, regexp_replace(device, '[0-9.]+ ms', 'N ms') AS device
FROM gpudl_device_info() WHERE backend = 'partition' ORDER BY device;
-- the owners' tuples add up to the answer
SELECT sum((regexp_match(device, '(\d+) tuples'))[1]::bigint) AS owned
FROM gpudl_device_info() WHERE backend = 'partition';
-- gpudl.devices takes 'all' or a list of GPU numbers
SET gpudl.devices = '0, 1';
SHOW gpudl.devices;
SET gpudl.devices = 'all';
SET gpudl.devices = '0,0';
SET gpudl.devices = 'gpu1';
RESET gpudl.devices;
RESET gpudl.partitions;
RESET gpudl.explain_machine_details;
RESET gpudl.device;
DROP SCHEMA t13 CASCADE;
