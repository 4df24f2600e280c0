-- 11_differential: for many random graphs, programs with linear and
-- non-linear recursion, mutual recursion, negation, comparisons, arithmetic
-- and aggregates give exactly the rows of the equivalent SQL (WITH RECURSIVE,
-- EXCEPT, GROUP BY) in PostgreSQL itself.
CREATE SCHEMA t11;
SET search_path = t11, public;
SET client_min_messages = warning;
CREATE TABLE edge(a int, b int);
CREATE TABLE node(n int);
CREATE TABLE wedge(a int, b int, w bigint);
CREATE TABLE named(a text, b text);

SELECT gpudl_create_program('diff', $$
  tc(X, Y) :- edge(X, Y).
  tc(X, Z) :- tc(X, Y), edge(Y, Z).
  nl(X, Y) :- edge(X, Y).
  nl(X, Z) :- nl(X, Y), nl(Y, Z).
  sg(X, Y) :- edge(P, X), edge(P, Y), X != Y.
  sg(X, Y) :- edge(A, X), sg(A, B), edge(B, Y).
  odd(X, Y) :- edge(X, Y).
  odd(X, Z) :- ev(X, Y), edge(Y, Z).
  ev(X, Z) :- odd(X, Y), edge(Y, Z).
  unreach(X, Y) :- node(X), node(Y), !tc(X, Y).
  sink(X) :- node(X), !edge(X, _).
  calc(X, Z) :- edge(X, Y), X < Y, Z = X * 2 + Y % 3 - 1.
  band(X, Y) :- tc(X, Y), Y >= X + 2, X != 3, Y <= 30.
  deg(X, count(Y)) :- edge(X, Y).
  reach(X, count(Y)) :- tc(X, Y).
  wsum(X, sum(W)) :- wedge(X, _, W).
  wmin(X, min(W)) :- wedge(X, _, W).
  wmax(Y, max(W)) :- wedge(_, Y, W).
  total(sum(W)) :- wedge(_, _, W).
  hub(X) :- deg(X, D), D > 2.
  anc(X, Y) :- named(X, Y).
  anc(X, Z) :- anc(X, Y), named(Y, Z).
  cousin(X, Y) :- named(P, X), named(Q, Y), named(G, P), named(G, Q), P != Q.
  loop(X) :- tc(X, X).
$$);

-- the SQL each predicate must equal
CREATE TABLE reference(pred text, goal text, cols text, sql text);
INSERT INTO reference VALUES
 ('tc', 'tc(X, Y)', 'a int, b int',
  'WITH RECURSIVE r(a, b) AS (SELECT a, b FROM edge UNION SELECT r.a, e.b FROM r JOIN edge e ON e.a = r.b) SELECT a, b FROM r'),
 ('nl', 'nl(X, Y)', 'a int, b int',
  'WITH RECURSIVE r(a, b) AS (SELECT a, b FROM edge UNION SELECT r.a, e.b FROM r JOIN edge e ON e.a = r.b) SELECT a, b FROM r'),
 ('sg', 'sg(X, Y)', 'a int, b int',
  'WITH RECURSIVE s(x, y) AS (SELECT e1.b, e2.b FROM edge e1 JOIN edge e2 ON e1.a = e2.a WHERE e1.b <> e2.b
     UNION SELECT e1.b, e2.b FROM s JOIN edge e1 ON e1.a = s.x JOIN edge e2 ON e2.a = s.y) SELECT x, y FROM s'),
 ('odd', 'odd(X, Y)', 'a int, b int',
  'WITH RECURSIVE p(a, b, odd) AS (SELECT a, b, true FROM edge UNION SELECT p.a, e.b, NOT p.odd FROM p JOIN edge e ON e.a = p.b) SELECT a, b FROM p WHERE odd'),
 ('ev', 'ev(X, Y)', 'a int, b int',
  'WITH RECURSIVE p(a, b, odd) AS (SELECT a, b, true FROM edge UNION SELECT p.a, e.b, NOT p.odd FROM p JOIN edge e ON e.a = p.b) SELECT a, b FROM p WHERE NOT odd'),
 ('unreach', 'unreach(X, Y)', 'a int, b int',
  'SELECT x.n, y.n FROM node x CROSS JOIN node y EXCEPT (WITH RECURSIVE r(a, b) AS (SELECT a, b FROM edge UNION SELECT r.a, e.b FROM r JOIN edge e ON e.a = r.b) SELECT a, b FROM r)'),
 ('sink', 'sink(X)', 'a int',
  'SELECT n FROM node EXCEPT SELECT a FROM edge'),
 ('calc', 'calc(X, Z)', 'a int, b int',
  'SELECT DISTINCT a, a * 2 + b % 3 - 1 FROM edge WHERE a < b'),
 ('band', 'band(X, Y)', 'a int, b int',
  'WITH RECURSIVE r(a, b) AS (SELECT a, b FROM edge UNION SELECT r.a, e.b FROM r JOIN edge e ON e.a = r.b) SELECT a, b FROM r WHERE b >= a + 2 AND a <> 3 AND b <= 30'),
 ('deg', 'deg(X, N)', 'a int, n bigint',
  'SELECT a, count(DISTINCT b) FROM edge GROUP BY a'),
 ('reach', 'reach(X, N)', 'a int, n bigint',
  'WITH RECURSIVE r(a, b) AS (SELECT a, b FROM edge UNION SELECT r.a, e.b FROM r JOIN edge e ON e.a = r.b) SELECT a, count(*) FROM r GROUP BY a'),
 ('wsum', 'wsum(X, S)', 'a int, s bigint',
  'SELECT a, sum(w) FROM (SELECT DISTINCT a, w FROM wedge) d GROUP BY a'),
 ('wmin', 'wmin(X, S)', 'a int, s bigint',
  'SELECT a, min(w) FROM wedge GROUP BY a'),
 ('wmax', 'wmax(X, S)', 'a int, s bigint',
  'SELECT b, max(w) FROM wedge GROUP BY b'),
 ('total', 'total(S)', 's bigint',
  'SELECT sum(w) FROM (SELECT DISTINCT w FROM wedge) d HAVING count(*) > 0'),
 ('hub', 'hub(X)', 'a int',
  'SELECT a FROM edge GROUP BY a HAVING count(DISTINCT b) > 2'),
 ('anc', 'anc(X, Y)', 'a text, b text',
  'WITH RECURSIVE r(a, b) AS (SELECT a, b FROM named UNION SELECT r.a, n.b FROM r JOIN named n ON n.a = r.b) SELECT a, b FROM r'),
 ('cousin', 'cousin(X, Y)', 'a text, b text',
  'SELECT DISTINCT n1.b, n2.b FROM named n1 JOIN named n2 ON true JOIN named g1 ON g1.b = n1.a JOIN named g2 ON g2.b = n2.a AND g2.a = g1.a WHERE n1.a <> n2.a'),
 ('loop', 'loop(X)', 'a int',
  'WITH RECURSIVE r(a, b) AS (SELECT a, b FROM edge UNION SELECT r.a, e.b FROM r JOIN edge e ON e.a = r.b) SELECT a FROM r WHERE a = b');

-- rows in one and not the other, both ways (duplicates from gpudl count too)
CREATE FUNCTION mismatches(goal text, cols text, ref text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  EXECUTE format('WITH g AS (SELECT * FROM gpudl_query(''diff'', %L) AS t(%s)), s AS (SELECT DISTINCT * FROM (%s) q)
                  SELECT (SELECT count(*) FROM (SELECT * FROM g EXCEPT ALL SELECT * FROM s) d1)
                       + (SELECT count(*) FROM (SELECT * FROM s EXCEPT ALL SELECT * FROM g) d2)',
                 goal, cols, ref) INTO n;
  RETURN n;
END $$;

-- random data of a trial: n nodes, m edges, small weights, a random family
CREATE FUNCTION fill(seed int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE n int; m int;
BEGIN
  PERFORM setseed(seed / 1000.0);
  n := 3 + (random() * 30)::int;
  m := (random() * n * 2.5)::int;
  TRUNCATE edge, node, wedge, named;
  INSERT INTO node SELECT g FROM generate_series(1, n) g;
  INSERT INTO edge SELECT DISTINCT 1 + (random() * (n - 1))::int, 1 + (random() * (n - 1))::int
    FROM generate_series(1, m);
  INSERT INTO wedge SELECT a, b, (random() * 20)::bigint - 5 FROM edge;
  INSERT INTO named SELECT DISTINCT 'p' || (random() * n)::int, 'p' || (random() * n)::int
    FROM generate_series(1, m) WHERE random() < 0.7;
  ANALYZE edge, node, wedge, named;
END $$;

CREATE TABLE outcome(seed int, pred text, bad bigint, sqlrows bigint);
DO $$
DECLARE s int; r record; bad bigint; cnt bigint;
BEGIN
  FOR s IN 1..100 LOOP
    PERFORM fill(s);
    FOR r IN SELECT * FROM reference LOOP
      bad := mismatches(r.goal, r.cols, r.sql);
      EXECUTE format('SELECT count(*) FROM (SELECT DISTINCT * FROM (%s) q) d', r.sql) INTO cnt;
      INSERT INTO outcome VALUES (s, r.pred, bad, cnt);
    END LOOP;
  END LOOP;
END $$;

-- every predicate, every trial: no row differs; and the trials were not trivial
SELECT pred, count(*) AS trials, sum(bad) AS differing_rows, sum(sqlrows) > 0 AS nonempty
FROM outcome GROUP BY pred ORDER BY pred;
SELECT seed, pred, bad FROM outcome WHERE bad <> 0 ORDER BY 1, 2 LIMIT 10;
-- gpudl_count agrees with the rows of gpudl_query
SELECT gpudl_count('diff', 'tc(X, Y)') = (SELECT count(*) FROM gpudl_query('diff', 'tc(X, Y)') AS t(a int, b int)) AS count_matches;
SELECT gpudl_count('diff', 'tc(X, X)') = (SELECT count(*) FROM gpudl_query('diff', 'loop(X)') AS t(a int)) AS repeated_variables;
