-- 12_plancache: compiled plans are cached per (program, version, tables);
-- a rule edit, a re-bind, a dropped or altered table invalidates them, and a
-- second run of an unchanged program hits the cache.
CREATE SCHEMA t12;
SET search_path = t12, public;
CREATE TABLE edge(a int, b int);
INSERT INTO edge VALUES (1, 2), (2, 3), (3, 4);
CREATE TABLE edge2(a int, b int);
INSERT INTO edge2 VALUES (1, 2);
SELECT gpudl_create_program('pc');
SELECT gpudl_bind('pc', 'e', 'edge');
SELECT count(*) FROM gpudl_add_rules('pc', 'path(X, Y) :- e(X, Y). path(X, Z) :- path(X, Y), e(Y, Z).');
CREATE FUNCTION stat(n text) RETURNS bigint LANGUAGE sql AS
  $$ SELECT value FROM gpudl_stats() WHERE name = n $$;
CREATE TEMP TABLE base AS SELECT stat('plan_cache_hits') AS hits, stat('plan_cache_misses') AS misses;
CREATE FUNCTION delta() RETURNS TABLE(hits bigint, misses bigint) LANGUAGE sql AS
  $$ SELECT stat('plan_cache_hits') - b.hits, stat('plan_cache_misses') - b.misses FROM base b $$;

SELECT gpudl_count('pc', 'path(X, Y)');           -- compiles: a miss
SELECT * FROM delta();
SELECT gpudl_count('pc', 'path(X, Y)');           -- unchanged: a hit
SELECT gpudl_count('pc', 'path(1, Y)');           -- another goal, same plan: a hit
SELECT * FROM delta();
-- new data does not need a new plan, and is seen
INSERT INTO edge VALUES (4, 5);
SELECT gpudl_count('pc', 'path(X, Y)');
SELECT * FROM delta();
-- a rule edit bumps the version: a miss
SELECT count(*) FROM gpudl_add_rules('pc', 'self(X) :- path(X, X).');
SELECT gpudl_count('pc', 'path(X, Y)');
SELECT * FROM delta();
-- direct DML on the rules too
UPDATE gpudl.rules SET rule = 'self(X) :- path(X, X), X > 0.' WHERE program = 'pc' AND head = 'self';
SELECT gpudl_count('pc', 'path(X, Y)');
SELECT * FROM delta();
-- a re-bind: a miss, and the new table is read
SELECT gpudl_bind('pc', 'e', 'edge2');
SELECT gpudl_count('pc', 'path(X, Y)');
SELECT * FROM delta();
-- an altered table (relcache invalidation): a miss
ALTER TABLE edge2 ADD COLUMN note text;
SELECT gpudl_bind('pc', 'e', 'edge2', ARRAY['a', 'b']);
SELECT gpudl_count('pc', 'path(X, Y)');
ALTER TABLE edge2 ALTER COLUMN note TYPE varchar;
SELECT gpudl_count('pc', 'path(X, Y)');
SELECT * FROM delta();
-- a table found through search_path that is dropped and re-created: a miss
SELECT gpudl_create_program('pc2', 'r(X) :- edge(X, _).');
SELECT gpudl_count('pc2', 'r(X)');
DROP TABLE edge;
SELECT gpudl_count('pc2', 'r(X)');
CREATE TABLE edge(a int, b int);
INSERT INTO edge VALUES (7, 8);
SELECT gpudl_count('pc2', 'r(X)');
SELECT * FROM delta();
-- the same name on another schema earlier in search_path: another table is read
CREATE SCHEMA t12b;
CREATE TABLE t12b.edge(a int, b int);
INSERT INTO t12b.edge VALUES (1, 1), (2, 2), (3, 3);
SET search_path = t12b, t12, public;
SELECT gpudl_count('pc2', 'r(X)');
SET search_path = t12, public;
SELECT gpudl_count('pc2', 'r(X)');
-- a dropped program forgets its plan
SELECT gpudl_drop_program('pc2');
SELECT gpudl_count('pc2', 'r(X)');
