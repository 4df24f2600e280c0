-- 40_cache: tables pinned with gpudl_load serve later queries, and are never
-- read stale: every change is seen by the next query.
CREATE SCHEMA t40;
SET search_path = t40, public;
CREATE TABLE edge(a int, b int, label text);
INSERT INTO edge VALUES (1, 2, 'x'), (2, 3, 'y'), (3, 4, 'x');
SELECT gpudl_create_program('cache40', $$
  path(X, Y) :- edge(X, Y, _).
  path(X, Z) :- path(X, Y), edge(Y, Z, _).
  xs(X) :- edge(X, _, x).
$$);
CREATE FUNCTION reads() RETURNS bigint LANGUAGE sql AS
  $$ SELECT value FROM gpudl_stats() WHERE name = 'cache_reads' $$;
CREATE TEMP TABLE r0 AS SELECT reads() AS n;

SELECT gpudl_load('edge');
-- on the GPU when runs may use one (gpudl.device auto or gpu and a device works)
SELECT relation, rows,
       device = CASE WHEN current_setting('gpudl.device') <> 'cpu'
                      AND EXISTS (SELECT 1 FROM gpudl_device_info() WHERE backend = 'cuda')
                     THEN 'gpu' ELSE 'cpu' END AS on_expected_device
  FROM gpudl_cache_status();
SELECT gpudl_count('cache40', 'path(X, Y)');
SELECT * FROM gpudl_query('cache40', 'xs(X)') AS t(x int) ORDER BY 1;
SELECT reads() - (SELECT n FROM r0) AS served_from_cache;

-- changes are seen at once: insert, update, delete, truncate
INSERT INTO edge VALUES (4, 5, 'x');
SELECT gpudl_count('cache40', 'path(X, Y)');
UPDATE edge SET label = 'y' WHERE a = 1;
SELECT * FROM gpudl_query('cache40', 'xs(X)') AS t(x int) ORDER BY 1;
DELETE FROM edge WHERE a = 2;
SELECT gpudl_count('cache40', 'path(X, Y)');
BEGIN;
INSERT INTO edge VALUES (10, 11, 'z');
SELECT gpudl_count('cache40', 'path(X, Y)');
ROLLBACK;
SELECT gpudl_count('cache40', 'path(X, Y)');
TRUNCATE edge;
SELECT gpudl_count('cache40', 'path(X, Y)');
INSERT INTO edge VALUES (7, 8, 'x');
SELECT gpudl_count('cache40', 'path(X, Y)');
SELECT relation, rows FROM gpudl_cache_status();

-- privileges are checked at each read from the cache
CREATE ROLE gpudl_cache_reader;
GRANT USAGE ON SCHEMA t40 TO gpudl_cache_reader;
SELECT gpudl_grant('cache40', 'gpudl_cache_reader', 'use');
SET ROLE gpudl_cache_reader;
SELECT gpudl_count('cache40', 'path(X, Y)');
RESET ROLE;

-- errors
SELECT gpudl_unload('edge');
SELECT gpudl_unload('edge');
CREATE VIEW edge_view AS SELECT * FROM edge;
SELECT gpudl_load('edge_view');
CREATE TABLE secure(a int);
ALTER TABLE secure ENABLE ROW LEVEL SECURITY;
SELECT gpudl_load('secure');
CREATE TABLE mine(a int);
GRANT SELECT ON mine TO gpudl_cache_reader;
SET ROLE gpudl_cache_reader;
SELECT gpudl_load('mine');
RESET ROLE;
-- once its owner loaded it, a reader may load it too; without SELECT, not
SELECT gpudl_load('mine');
SET ROLE gpudl_cache_reader;
SELECT gpudl_load('mine');
SELECT relation, rows FROM gpudl_cache_status() WHERE relation = 'mine'::regclass;
SELECT gpudl_unload('mine');
RESET ROLE;
REVOKE SELECT ON mine FROM gpudl_cache_reader;
SET ROLE gpudl_cache_reader;
SELECT gpudl_load('mine');
RESET ROLE;
-- a dropped table leaves the cache
DROP TABLE mine;
SELECT count(*) FROM gpudl_cache_status();
REVOKE ALL ON SCHEMA t40 FROM gpudl_cache_reader;
SELECT gpudl_revoke('cache40', 'gpudl_cache_reader', 'use');
DROP ROLE gpudl_cache_reader;
