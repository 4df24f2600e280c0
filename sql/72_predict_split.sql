-- 72_predict_split: gpudl_predict with target NULL — a whole split of
-- (relation, subject, object) rows in one call — equals one call per
-- relation; the goal form with target NULL; its errors; rights.
\set VERBOSITY default
SET client_min_messages = warning;
DROP ROLE IF EXISTS split_user;
CREATE ROLE split_user;
RESET client_min_messages;
CREATE TABLE sp_next(s text, o text);
INSERT INTO sp_next SELECT 'e' || x, 'e' || ((x + 1) % 20) FROM generate_series(0, 19) x;
CREATE TABLE sp_skip(s text, o text);
INSERT INTO sp_skip SELECT 'e' || x, 'e' || ((x + 2) % 20) FROM generate_series(0, 19) x WHERE x % 3 <> 0;
CREATE TABLE sp_prev(s text, o text);
INSERT INTO sp_prev SELECT 'e' || ((x + 1) % 20), 'e' || x FROM generate_series(0, 19) x WHERE x % 2 = 0;
CREATE TABLE "sp Part"(s text, o text);
INSERT INTO "sp Part" SELECT 'e' || x, 'e' || ((x + 5) % 20) FROM generate_series(0, 19) x WHERE x % 4 <> 1;
SELECT gpudl_create_program('split');
SELECT gpudl_bind('split', 'next', 'sp_next'), gpudl_bind('split', '/x/skip', 'sp_skip'),
       gpudl_bind('split', 'prev', 'sp_prev'), gpudl_bind('split', 'has part', '"sp Part"');
-- rules stored for one relation: the split reads them, the others are mined
SELECT count(*) > 0 AS stored
  FROM gpudl_mine('split', '/x/skip', max_body => 2, commit => true);

-- the split: both directions of five entities for each relation, and an unknown entity
CREATE TABLE sp_queries(rel text, s text, o text);
INSERT INTO sp_queries
  SELECT r, 'e' || x, NULL FROM unnest(ARRAY['next', '/x/skip', 'prev', 'has part']) r, generate_series(0, 4) x
  UNION ALL
  SELECT r, NULL, 'e' || x FROM unnest(ARRAY['next', '/x/skip', 'prev', 'has part']) r, generate_series(5, 9) x
  UNION ALL
  SELECT 'next', 'nobody', NULL;
CREATE TEMP TABLE sp_split AS
  SELECT query, answer, score, rank, rules FROM gpudl_predict('split', NULL, 'sp_queries');
CREATE TEMP TABLE sp_each AS
  SELECT p.* FROM (SELECT DISTINCT rel FROM sp_queries) r,
    LATERAL gpudl_predict('split', r.rel, format('SELECT s, o FROM sp_queries WHERE rel = %L', r.rel)) p;
-- every relation answered, the same rows as one call per relation
SELECT count(*) > 0 AS answers, count(DISTINCT query) AS queries_answered FROM sp_split;
SELECT (SELECT count(*) FROM sp_split) = (SELECT count(*) FROM sp_each) AS same_count,
       NOT EXISTS (SELECT query, answer, score, rank, rules FROM sp_split
                   EXCEPT SELECT query, answer, score, rank, rules FROM sp_each) AS split_in_each,
       NOT EXISTS (SELECT query, answer, score, rank, rules FROM sp_each
                   EXCEPT SELECT query, answer, score, rank, rules FROM sp_split) AS each_in_split;
-- the queries print their relation (quoted where it needs quotes)
SELECT relation FROM (SELECT DISTINCT regexp_replace(query, '\(.*', '') AS relation FROM sp_split) r
  ORDER BY relation COLLATE "C";
-- a SQL query of rows works the same; other column types of the relation are fine
SELECT count(*) > 0 AS answered, count(*) = (SELECT count(*) FROM sp_split WHERE query LIKE '"has part"(%') AS same_as_table
  FROM gpudl_predict('split', NULL, 'SELECT rel::varchar, s, o FROM sp_queries WHERE rel = ''has part''');
-- a goal with target NULL: its predicate is the target
SELECT a IS NOT NULL AS answered, a = b AS goal_same
  FROM (SELECT (SELECT array_agg(answer ORDER BY rank, answer COLLATE "C")
                  FROM gpudl_predict('split', NULL, '"/x/skip"("e1", Y)', exclude_known => false)) AS a,
               (SELECT array_agg(answer ORDER BY rank, answer COLLATE "C")
                  FROM gpudl_predict('split', '/x/skip', '"/x/skip"("e1", Y)', exclude_known => false)) AS b) x;

-- errors: nothing returned, the catalog unchanged
SELECT count(*) AS mined_before FROM gpudl.mined_rules \gset
SELECT count(*) FROM gpudl_predict('split', NULL, 'SELECT s, o FROM sp_queries');
SELECT count(*) FROM gpudl_predict('split', NULL, 'SELECT ''nope'', ''e1'', NULL');
SELECT count(*) FROM gpudl_predict('split', NULL, 'SELECT ''next'', NULL, NULL');
SELECT count(*) FROM gpudl_predict('split', NULL, 'SELECT NULL, ''e1'', NULL');
SELECT count(*) FROM gpudl_predict('split', NULL, 'SELECT ''next'', 1, NULL');
SELECT count(*) FROM gpudl_predict('split', NULL, 'nope("e1", Y)');

SELECT count(*) = :mined_before AS catalog_unchanged FROM gpudl.mined_rules;

-- rights: the caller's, on the query table and on every table of the graph
SELECT count(*) AS split_rows FROM sp_split \gset
SELECT gpudl_grant('split', 'split_user', 'use');
SET ROLE split_user;
SELECT count(*) FROM gpudl_predict('split', NULL, 'sp_queries');
RESET ROLE;
GRANT SELECT ON sp_queries, sp_next, sp_skip, sp_prev TO split_user;
SET ROLE split_user;
SELECT count(*) FROM gpudl_predict('split', NULL, 'sp_queries');
RESET ROLE;
GRANT SELECT ON "sp Part" TO split_user;
SET ROLE split_user;
SELECT count(*) = :split_rows AS all_rows_with_rights
  FROM gpudl_predict('split', NULL, 'sp_queries');
RESET ROLE;

SELECT gpudl_drop_program('split');
DROP TABLE sp_queries, sp_next, sp_skip, sp_prev, "sp Part";
DROP ROLE split_user;
