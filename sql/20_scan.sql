-- 20_scan: the GpuDatalog custom scan — EXPLAIN, WHERE conditions pushed
-- into the goal and evaluated goal-directed (magic sets), prepared
-- statements, rescans, cursors, LIMIT, joins and subqueries; answers equal
-- with and without pushdown, goal-directed evaluation and the custom scan.
CREATE SCHEMA t20;
SET search_path = t20, public;
SET gpudl.explain_machine_details = off;	-- no device, times or bytes below
CREATE TABLE parent(p text, c text);
INSERT INTO parent VALUES ('abe', 'homer'), ('mona', 'homer'), ('homer', 'bart'),
  ('homer', 'lisa'), ('marge', 'bart'), ('marge', 'lisa'), ('lisa', 'zia');
SELECT gpudl_create_program('fam20', $$
  anc(X, Y) :- parent(X, Y).
  anc(X, Z) :- anc(X, Y), parent(Y, Z).
  kids(X, count(Y)) :- parent(X, Y).
  lonely(X) :- parent(_, X), !parent(X, _).
$$);

-- EXPLAIN: program, version, goal, evaluation, strata, plan cache
EXPLAIN (COSTS OFF) SELECT * FROM gpudl_query('fam20', 'anc(X, Y)') AS t(a text, b text);
EXPLAIN (COSTS OFF) SELECT * FROM gpudl_query('fam20', 'anc(X, Y)') AS t(a text, b text);
-- an equality on a column is pushed into the goal; the evaluation follows the binding
EXPLAIN (COSTS OFF) SELECT * FROM gpudl_query('fam20', 'anc(X, Y)') AS t(a text, b text) WHERE a = 'abe';
SELECT * FROM gpudl_query('fam20', 'anc(X, Y)') AS t(a text, b text) WHERE a = 'abe' ORDER BY b;
EXPLAIN (COSTS OFF) SELECT * FROM gpudl_query('fam20', 'anc(X, Y)') AS t(a text, b text) WHERE 'lisa' = b;
SELECT * FROM gpudl_query('fam20', 'anc(X, Y)') AS t(a text, b text) WHERE 'lisa' = b ORDER BY a;
-- ranges, IN lists and expressions of the column stay filters
EXPLAIN (COSTS OFF) SELECT * FROM gpudl_query('fam20', 'anc(X, Y)') AS t(a text, b text)
  WHERE a = 'homer' AND b > 'c' AND b IN ('lisa', 'zia', 'bart') AND length(a) = 5;
SELECT * FROM gpudl_query('fam20', 'anc(X, Y)') AS t(a text, b text)
  WHERE a = 'homer' AND b > 'c' AND b IN ('lisa', 'zia', 'bart') AND length(a) = 5 ORDER BY b;
-- EXPLAIN ANALYZE: iterations and tuples derived per stratum
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
  SELECT * FROM gpudl_query('fam20', 'anc(X, Y)') AS t(a text, b text) WHERE a = 'abe';
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
  SELECT * FROM gpudl_query('fam20', 'anc(X, Y)') AS t(a text, b text);
-- VERBOSE shows the rewritten program
EXPLAIN (VERBOSE, COSTS OFF) SELECT b FROM gpudl_query('fam20', 'anc(X, Y)') AS t(a text, b text) WHERE b = 'zia';
-- gpudl_count in FROM, and a count of gpudl_query rows: no tuple leaves the engine
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT * FROM gpudl_count('fam20', 'anc("abe", Y)');
SELECT * FROM gpudl_count('fam20', 'anc("abe", Y)') AS n;
EXPLAIN (COSTS OFF) SELECT count(*) FROM gpudl_query('fam20', 'anc(X, Y)') AS t(a text, b text) WHERE a = 'marge';
SELECT count(*) FROM gpudl_query('fam20', 'anc(X, Y)') AS t(a text, b text) WHERE a = 'marge';
-- an aggregate's count is not pushed into its body, but filters; the group binds
EXPLAIN (COSTS OFF) SELECT * FROM gpudl_query('fam20', 'kids(X, N)') AS t(a text, n bigint) WHERE n = 2 AND a = 'homer';
SELECT * FROM gpudl_query('fam20', 'kids(X, N)') AS t(a text, n bigint) WHERE n = 2 ORDER BY a;
-- negation below a bound goal
SELECT * FROM gpudl_query('fam20', 'lonely(X)') AS t(a text) WHERE a = 'bart';
-- constants in the goal text and pushed values together
SELECT * FROM gpudl_query('fam20', 'anc("abe", Y)') AS t(a text, b text) WHERE b = 'lisa';
SELECT * FROM gpudl_query('fam20', 'anc("abe", Y)') AS t(a text, b text) WHERE a = 'homer';
SELECT * FROM gpudl_query('fam20', 'anc(X, Y)') AS t(a text, b text) WHERE a = 'abe' AND a = 'homer';
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
  SELECT * FROM gpudl_query('fam20', 'anc(X, Y)') AS t(a text, b text) WHERE a = 'abe' AND a = 'homer';
-- a repeated goal variable: one pushed value binds both columns
EXPLAIN (COSTS OFF) SELECT * FROM gpudl_query('fam20', 'anc(X, X)') AS t(a text, b text) WHERE a = 'abe';
-- varchar columns; an equality under a nondeterministic collation is not pushed
SELECT * FROM gpudl_query('fam20', 'anc(X, Y)') AS t(a varchar, b varchar) WHERE a = 'marge' ORDER BY b;
CREATE COLLATION nocase20 (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
EXPLAIN (COSTS OFF) SELECT * FROM gpudl_query('fam20', 'anc(X, Y)') AS t(a text, b text) WHERE a = 'MARGE' COLLATE nocase20;
SELECT * FROM gpudl_query('fam20', 'anc(X, Y)') AS t(a text, b text) WHERE a = 'MARGE' COLLATE nocase20 ORDER BY b;
-- the settings: no pushdown, no goal-directed evaluation, no custom scan
SET gpudl.enable_pushdown = off;
EXPLAIN (COSTS OFF) SELECT * FROM gpudl_query('fam20', 'anc(X, Y)') AS t(a text, b text) WHERE a = 'abe';
RESET gpudl.enable_pushdown;
SET gpudl.enable_magic = off;
EXPLAIN (COSTS OFF) SELECT * FROM gpudl_query('fam20', 'anc(X, Y)') AS t(a text, b text) WHERE a = 'abe';
RESET gpudl.enable_magic;
SET gpudl.enable_customscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM gpudl_query('fam20', 'anc(X, Y)') AS t(a text, b text) WHERE a = 'abe';
RESET gpudl.enable_customscan;
-- WITH ORDINALITY stays a function scan
EXPLAIN (COSTS OFF) SELECT * FROM ROWS FROM (gpudl_query('fam20', 'anc(X, Y)') AS (a text, b text)) WITH ORDINALITY AS t(a, b, n);
-- with machine details: device, engine time and bytes appear
CREATE FUNCTION t20.plan_lines(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
  FOR l IN EXECUTE q LOOP RETURN NEXT l; END LOOP;
END $$;
SET gpudl.explain_machine_details = on;
SELECT substring(l FROM '^ *([A-Za-z ]+):') AS machine_line
FROM t20.plan_lines('EXPLAIN (ANALYZE, COSTS OFF) SELECT * FROM gpudl_query(''fam20'', ''anc(X, Y)'') AS t(a text, b text) WHERE a = ''abe''') l
WHERE l ~ '(Device|Engine Time|Bytes Moved):' ORDER BY 1;
SET gpudl.explain_machine_details = off;

-- errors through the scan are those of the function
SELECT * FROM gpudl_query('fam20', 'anc(X, Y)') AS t(a text);
SELECT * FROM gpudl_query('fam20', 'anc(X, Y)') AS t(a int, b text) WHERE b = 'x';
SELECT * FROM gpudl_query('fam20', NULL) AS t(a text, b text);
SELECT * FROM gpudl_query('nosuch20', 'anc(X, Y)') AS t(a text, b text) WHERE a = 'abe';
SELECT * FROM gpudl_query('fam20', 'anc(X, Y') AS t(a text, b text);

-- prepared statements: parameters are pushed, evaluated at executor start
PREPARE desc20(text) AS
  SELECT b FROM gpudl_query('fam20', 'anc(X, Y)') AS t(a text, b text) WHERE a = $1 ORDER BY b;
EXECUTE desc20('abe');
EXECUTE desc20('homer');
EXECUTE desc20('marge');
EXECUTE desc20('nobody');
EXECUTE desc20(NULL);
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE desc20('abe');
EXECUTE desc20('abe');
EXECUTE desc20('lisa');
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) EXECUTE desc20('homer');
RESET plan_cache_mode;
-- program and goal as parameters too
PREPARE any20(text, text, text) AS
  SELECT count(*) FROM gpudl_query($1, $2) AS t(a text, b text) WHERE b = $3;
EXECUTE any20('fam20', 'anc(X, Y)', 'lisa');
EXECUTE any20('fam20', 'anc("mona", Y)', 'lisa');
EXECUTE any20('fam20', 'anc(X, Y)', 'zia');
SET plan_cache_mode = force_generic_plan;
EXECUTE any20('fam20', 'anc(X, Y)', 'bart');
EXPLAIN (COSTS OFF) EXECUTE any20('fam20', 'anc(X, Y)', 'bart');
RESET plan_cache_mode;
DEALLOCATE desc20;
DEALLOCATE any20;

-- rescans: a correlated subquery runs again for each outer value
CREATE TABLE people(name text);
INSERT INTO people VALUES ('abe'), ('homer'), ('zia'), ('marge');
ANALYZE people;
SELECT p.name, (SELECT string_agg(b, ',' ORDER BY b) FROM gpudl_query('fam20', 'anc(X, Y)') AS t(a text, b text)
                WHERE t.a = p.name) AS descendants
FROM people p ORDER BY 1;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT p.name, (SELECT count(*) FROM gpudl_query('fam20', 'anc(X, Y)') AS t(a text, b text) WHERE t.a = p.name)
FROM people p;
-- LATERAL: the goal built from the outer row, run for each
SELECT p.name, n FROM people p, LATERAL gpudl_count('fam20', format('anc(%s, Y)', p.name)) AS n ORDER BY 1;
SELECT p.name, t.b FROM people p,
  LATERAL gpudl_query('fam20', format('anc(X, %s)', p.name)) AS t(a text, b text) WHERE t.a = 'abe' ORDER BY 1;
-- a LATERAL scan also takes the join condition on its column as a bound argument
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT p.name, t.b FROM people p,
  LATERAL gpudl_query('fam20', 'anc(X, Y)' || left(p.name, 0)) AS t(a text, b text) WHERE t.a = p.name;
-- a join condition on a column binds the goal: a nested loop runs the scan
-- once per outer row, goal-directed
EXPLAIN (COSTS OFF)
SELECT p.name, t.b FROM people p JOIN gpudl_query('fam20', 'anc(X, Y)') AS t(a text, b text) ON t.a = p.name;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT p.name, t.b FROM people p JOIN gpudl_query('fam20', 'anc(X, Y)') AS t(a text, b text) ON t.a = p.name;
SELECT p.name, t.b FROM people p JOIN gpudl_query('fam20', 'anc(X, Y)') AS t(a text, b text) ON t.a = p.name
ORDER BY 1, 2;
-- an inner side rescanned with nothing changed streams the same answer again
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT p.name, t.b FROM people p JOIN gpudl_query('fam20', 'anc(X, Y)') AS t(a text, b text) ON t.a < p.name;
SELECT count(*) FROM people p JOIN gpudl_query('fam20', 'anc(X, Y)') AS t(a text, b text) ON t.a < p.name;
SET gpudl.enable_customscan = off;
SELECT count(*) FROM people p JOIN gpudl_query('fam20', 'anc(X, Y)') AS t(a text, b text) ON t.a < p.name;
RESET gpudl.enable_customscan;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;

-- joins, subqueries, views: pushdown reaches the scan through them
SELECT x.b AS grandchild FROM gpudl_query('fam20', 'anc(X, Y)') AS x(a text, b text)
JOIN gpudl_query('fam20', 'anc(X, Y)') AS y(a text, b text) ON x.a = y.b
WHERE y.a = 'abe' AND x.a = 'homer' ORDER BY 1;
SELECT * FROM (SELECT * FROM gpudl_query('fam20', 'anc(X, Y)') AS t(a text, b text)) s
WHERE s.a = 'lisa';
CREATE VIEW anc20 AS SELECT * FROM gpudl_query('fam20', 'anc(X, Y)') AS t(ancestor text, descendant text);
EXPLAIN (COSTS OFF) SELECT descendant FROM anc20 WHERE ancestor = 'homer';
SELECT descendant FROM anc20 WHERE ancestor = 'homer' ORDER BY 1;
SELECT name FROM people WHERE name IN (SELECT descendant FROM anc20 WHERE ancestor = 'abe') ORDER BY 1;

-- cursors: forward, backward, absolute; the scan runs backwards itself
BEGIN;
DECLARE c20 SCROLL CURSOR FOR
  SELECT b FROM gpudl_query('fam20', 'anc(X, Y)') AS t(a text, b text) WHERE a = 'mona';
EXPLAIN (COSTS OFF) SELECT b FROM gpudl_query('fam20', 'anc(X, Y)') AS t(a text, b text) WHERE a = 'mona';
CREATE FUNCTION t20.walk(cur refcursor) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  fwd text[] := '{}';
  bwd text[] := '{}';
  v text;
  abs2 text;
  rel text;
BEGIN
  LOOP FETCH cur INTO v; EXIT WHEN NOT FOUND; fwd := fwd || v; END LOOP;
  LOOP FETCH PRIOR FROM cur INTO v; EXIT WHEN NOT FOUND; bwd := v || bwd; END LOOP;
  FETCH ABSOLUTE 2 FROM cur INTO abs2;
  FETCH RELATIVE -1 FROM cur INTO rel;
  RETURN format('%s rows, backward %s, absolute 2 %s, relative -1 %s',
                cardinality(fwd), CASE WHEN bwd = fwd THEN 'same' ELSE 'differs' END,
                CASE WHEN abs2 = fwd[2] THEN 'ok' ELSE 'wrong' END,
                CASE WHEN rel = fwd[1] THEN 'ok' ELSE 'wrong' END);
END $$;
SELECT t20.walk('c20');
MOVE FIRST IN c20;
CLOSE c20;
-- a plain cursor fetched in parts
DECLARE c20b CURSOR FOR SELECT count(*) OVER () AS n FROM gpudl_query('fam20', 'anc(X, Y)') AS t(a text, b text);
FETCH 2 FROM c20b;
CLOSE c20b;
COMMIT;

-- LIMIT stops the scan early: rows are decoded as they are fetched
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
  SELECT * FROM gpudl_query('fam20', 'anc(X, Y)') AS t(a text, b text) LIMIT 2;
SELECT count(*) FROM (SELECT * FROM gpudl_query('fam20', 'anc(X, Y)') AS t(a text, b text) LIMIT 3) s;
SELECT * FROM gpudl_query('fam20', 'anc(X, Y)') AS t(a text, b text) LIMIT 0;

-- direct calls with constants in the goal are goal-directed too: fewer tuples derived
CREATE FUNCTION t20.derived(goal text) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
  PERFORM gpudl_count('chain20', goal);
  RETURN (SELECT value FROM gpudl_stats() WHERE name = 'last_tuples_derived');
END $$;
CREATE TABLE chain(a int, b int);
INSERT INTO chain SELECT g, g + 1 FROM generate_series(1, 200) g;
SELECT gpudl_create_program('chain20', 'p(X, Y) :- chain(X, Y). p(X, Z) :- p(X, Y), chain(Y, Z).');
SELECT gpudl_count('chain20', 'p(150, Y)') AS answers, t20.derived('p(150, Y)') AS bound;
SET gpudl.enable_magic = off;
SELECT gpudl_count('chain20', 'p(150, Y)') AS answers, t20.derived('p(150, Y)') AS whole;
RESET gpudl.enable_magic;
SELECT count(*) FROM gpudl_query('chain20', 'p(X, 190)') AS t(a int, b int);
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
  SELECT * FROM gpudl_query('chain20', 'p(X, Y)') AS t(a int, b int) WHERE a = 195;

-- answers agree on random data: pushdown and goal-directed evaluation on,
-- each off, and the plain function scan
CREATE FUNCTION t20.agree(q text, skip text DEFAULT '') RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  ref text;
  got text;
  n bigint;
  cfg text;
BEGIN
  EXECUTE format('SELECT md5(coalesce(string_agg(r::text, '';'' ORDER BY r::text), '''')), count(*) FROM (%s) r', q)
    INTO ref, n;
  FOREACH cfg IN ARRAY ARRAY['gpudl.enable_pushdown', 'gpudl.enable_magic', 'gpudl.enable_customscan'] LOOP
    CONTINUE WHEN cfg = skip;
    PERFORM set_config(cfg, 'off', true);
    EXECUTE format('SELECT md5(coalesce(string_agg(r::text, '';'' ORDER BY r::text), '''')) FROM (%s) r', q)
      INTO got;
    PERFORM set_config(cfg, 'on', true);
    IF got IS DISTINCT FROM ref THEN
      RETURN format('differs with %s = off', cfg);
    END IF;
  END LOOP;
  RETURN format('same, %s rows', n);
END $$;
CREATE TABLE edge(a int, b int);
CREATE TABLE node(n int);
SELECT setseed(0.42);
INSERT INTO edge SELECT (random() * 40)::int, (random() * 40)::int FROM generate_series(1, 70);
INSERT INTO node SELECT g FROM generate_series(0, 40) g;
ANALYZE edge;
ANALYZE node;
SELECT gpudl_create_program('rand20', $$
  tc(X, Y) :- edge(X, Y).
  tc(X, Z) :- tc(X, Y), edge(Y, Z).
  rtc(X, Z) :- edge(X, Y), rtc(Y, Z).
  rtc(X, Y) :- edge(X, Y).
  sg(X, Y) :- edge(P, X), edge(P, Y), X != Y.
  sg(X, Y) :- edge(A, X), sg(A, B), edge(B, Y).
  unreach(X, Y) :- node(X), node(Y), !tc(X, Y).
  deg(X, count(Y)) :- edge(X, Y).
  hub(X, Y) :- tc(X, Y), deg(Y, D), D > 2.
  dist(X, Y, 1) :- edge(X, Y).
  dist(X, Z, D) :- dist(X, Y, D0), edge(Y, Z), D = D0 + 1, D < 6.
$$);
SELECT q, t20.agree(q, coalesce(skip, '')) FROM (VALUES
  ('SELECT * FROM gpudl_query(''rand20'', ''tc(X, Y)'') AS t(a int, b int) WHERE a = 7', NULL),
  ('SELECT * FROM gpudl_query(''rand20'', ''tc(X, Y)'') AS t(a int, b int) WHERE b = 12', NULL),
  ('SELECT * FROM gpudl_query(''rand20'', ''tc(X, Y)'') AS t(a int, b int) WHERE a = 3 AND b = 30', NULL),
  ('SELECT * FROM gpudl_query(''rand20'', ''rtc(X, Y)'') AS t(a int, b int) WHERE a = 20', NULL),
  ('SELECT * FROM gpudl_query(''rand20'', ''rtc(X, Y)'') AS t(a int, b int) WHERE b = 5', NULL),
  ('SELECT * FROM gpudl_query(''rand20'', ''sg(X, Y)'') AS t(a int, b int) WHERE a = 11', NULL),
  ('SELECT * FROM gpudl_query(''rand20'', ''unreach(X, Y)'') AS t(a int, b int) WHERE a = 1', NULL),
  ('SELECT * FROM gpudl_query(''rand20'', ''deg(X, N)'') AS t(a int, n bigint) WHERE n = 3', NULL),
  ('SELECT * FROM gpudl_query(''rand20'', ''hub(X, Y)'') AS t(a int, b int) WHERE a = 9', NULL),
  ('SELECT * FROM gpudl_query(''rand20'', ''dist(X, Y, D)'') AS t(a int, b int, d bigint) WHERE a = 2 AND d = 3', NULL),
  ('SELECT * FROM gpudl_query(''rand20'', ''dist(X, Y, D)'') AS t(a int, b int, d bigint) WHERE b = 14', NULL),
  ('SELECT n.n, (SELECT count(*) FROM gpudl_query(''rand20'', ''tc(X, Y)'') AS t(a int, b int) WHERE t.a = n.n) FROM node n', NULL),
  ('SELECT n.n, (SELECT count(*) FROM gpudl_query(''rand20'', ''sg(X, Y)'') AS t(a int, b int) WHERE t.b = n.n) FROM node n', NULL),
  ('SELECT e.a, t.b FROM edge e, LATERAL gpudl_query(''rand20'', ''rtc(X, Y)'') AS t(a int, b int) WHERE t.a = e.b AND e.a < 5', NULL),
  ('SELECT n.n, t.b FROM node n JOIN gpudl_query(''rand20'', ''sg(X, Y)'') AS t(a int, b int) ON t.a = n.n WHERE n.n < 4', NULL),
  ('SELECT n.n, t.a FROM node n JOIN gpudl_query(''rand20'', ''hub(X, Y)'') AS t(a int, b int) ON t.a = n.n + 1 WHERE n.n < 12', NULL),
  -- a LATERAL call with an outer reference runs once per outer row (the
  -- function scan is left out here: it calls gpudl_query once per row too)
  ('SELECT e.a, t.b FROM edge e, LATERAL gpudl_query(''rand20'', ''tc(X, Y)'' || left(e.a::text, 0)) AS t(a int, b int) WHERE t.a = e.b AND e.a < 9', 'gpudl.enable_customscan')
) v(q, skip);

DROP VIEW anc20;
SELECT gpudl_drop_program(name) FROM gpudl.programs WHERE name IN ('fam20', 'chain20', 'rand20') ORDER BY name;
