-- 73_kg_cache: the knowledge graph and its parsed stored rules kept between
-- calls of a session (0.6): only for tables whose changes are counted
-- (gpudl_load), never stale (table changes, rollbacks, stored rules and
-- program changes), never used for another role or a role that may not
-- read the tables, never for a table with row-level security; a kept graph
-- answers exactly as one read for the call.
\set VERBOSITY default
SET client_min_messages = warning;
DROP ROLE IF EXISTS kgc_reader;
DROP ROLE IF EXISTS kgc_other;
CREATE ROLE kgc_reader;
CREATE ROLE kgc_other;
RESET client_min_messages;
CREATE TABLE kc_parent(p text, c text);
INSERT INTO kc_parent VALUES ('abe', 'homer'), ('homer', 'bart'), ('homer', 'lisa'), ('bart', 'bo'),
  ('clancy', 'marge'), ('marge', 'bart'), ('marge', 'lisa'), ('homer', 'maggie'), ('marge', 'maggie');
CREATE TABLE kc_sib(a text, b text);
INSERT INTO kc_sib SELECT DISTINCT x.c, y.c FROM kc_parent x JOIN kc_parent y ON x.p = y.p AND x.c <> y.c
  WHERE x.c <> 'maggie' AND y.c <> 'maggie';
GRANT SELECT ON kc_parent, kc_sib TO kgc_reader;
SELECT gpudl_create_program('kc');
SELECT gpudl_bind('kc', 'sib', 'kc_sib');
SELECT gpudl_bind('kc', 'parent', 'kc_parent');
SELECT gpudl_grant('kc', 'kgc_reader', 'use');
SELECT gpudl_grant('kc', 'kgc_other', 'use');
SELECT count(*) FROM gpudl_mine('kc', 'sib', max_body => 2, commit => true);
CREATE VIEW kc_state AS SELECT program, entity_type, relations, entities, facts, rules, hits FROM gpudl_kg_cache_status();
GRANT SELECT ON kc_state TO kgc_reader;

-- tables whose changes are not counted: read per call, nothing kept
SELECT answer, rank FROM gpudl_predict('kc', 'sib', 'sib("maggie", Y)', "limit" => 0) ORDER BY rank, answer;
SELECT * FROM kc_state;

-- loaded tables: the second call reuses the graph and the parsed rules
SELECT gpudl_load('kc_parent'), gpudl_load('kc_sib');
SELECT answer, rank FROM gpudl_predict('kc', 'sib', 'sib("maggie", Y)', "limit" => 0) ORDER BY rank, answer;
SELECT * FROM kc_state;
SELECT answer, rank FROM gpudl_predict('kc', 'sib', 'sib("maggie", Y)', "limit" => 0) ORDER BY rank, answer;
SELECT * FROM kc_state;
-- a constant no fact mentions: no answers, and nothing added to the kept graph
SELECT count(*) FROM gpudl_predict('kc', 'sib', 'sib("nobody", Y)', "limit" => 0);
SELECT count(*) FROM gpudl_predict('kc', 'sib', 'SELECT ''nobody either''::text, NULL::text', "limit" => 0);
SELECT * FROM kc_state;

-- a committed change of a table: read again (one more entity and fact)
INSERT INTO kc_parent VALUES ('homer', 'zed');
SELECT answer, rank FROM gpudl_predict('kc', 'sib', 'sib("maggie", Y)', "limit" => 0) ORDER BY rank, answer;
SELECT * FROM kc_state;

-- a change rolled back: what the transaction read goes with it
BEGIN;
DELETE FROM kc_parent WHERE c = 'zed';
SELECT answer, rank FROM gpudl_predict('kc', 'sib', 'sib("maggie", Y)', "limit" => 0) ORDER BY rank, answer;
SELECT entities, hits FROM kc_state;
ROLLBACK;
SELECT * FROM kc_state;
SELECT answer, rank FROM gpudl_predict('kc', 'sib', 'sib("maggie", Y)', "limit" => 0) ORDER BY rank, answer;
-- the same in a subtransaction rolled back to its savepoint
BEGIN;
SAVEPOINT s;
DELETE FROM kc_parent WHERE c = 'zed';
SELECT count(*) FROM gpudl_predict('kc', 'sib', 'sib("maggie", Y)', "limit" => 0);
ROLLBACK TO SAVEPOINT s;
SELECT answer, rank FROM gpudl_predict('kc', 'sib', 'sib("maggie", Y)', "limit" => 0) ORDER BY rank, answer;
COMMIT;
SELECT count(*) FROM kc_state;

-- a change of the stored rules: parsed again, the graph kept
SELECT count(*) FROM gpudl_predict('kc', 'sib', 'sib("maggie", Y)', "limit" => 0);
DELETE FROM gpudl.mined_rules WHERE program = 'kc' AND target = 'sib' AND rule NOT LIKE '%parent(Z, X), parent(Z, Y)%';
SELECT answer, rank, rules FROM gpudl_predict('kc', 'sib', 'sib("maggie", Y)', "limit" => 0) ORDER BY rank, answer;
SELECT * FROM kc_state;
SELECT count(*) FROM gpudl_mine('kc', 'sib', max_body => 2, commit => true);
SELECT answer, rank FROM gpudl_predict('kc', 'sib', 'sib("maggie", Y)', "limit" => 0) ORDER BY rank, answer;
SELECT * FROM kc_state;

-- a change of the program: read again
SELECT gpudl_add_rules('kc', 'half(X, Y) :- sib(X, Y), parent("homer", X).') > 0 AS added;
SELECT answer, rank FROM gpudl_predict('kc', 'sib', 'sib("maggie", Y)', "limit" => 0) ORDER BY rank, answer;
SELECT * FROM kc_state;

-- a program dropped and created again under its name (its version starts
-- again at 1): read again
SELECT program, hits FROM kc_state;
SELECT gpudl_drop_program('kc');
SELECT gpudl_create_program('kc');
SELECT gpudl_bind('kc', 'sib', 'kc_sib');
SELECT gpudl_bind('kc', 'parent', 'kc_parent');
SELECT gpudl_add_rules('kc', 'half(X, Y) :- sib(X, Y), parent("marge", X).') > 0 AS added;
SELECT gpudl_grant('kc', 'kgc_reader', 'use');
SELECT gpudl_grant('kc', 'kgc_other', 'use');
SELECT count(*) FROM gpudl_mine('kc', 'sib', max_body => 2, commit => true);
-- the same version as the dropped program's, read again by the call above
SELECT (SELECT version FROM gpudl.programs WHERE name = 'kc') AS version, relations, hits FROM kc_state;
SELECT answer, rank FROM gpudl_predict('kc', 'sib', 'sib("maggie", Y)', "limit" => 0) ORDER BY rank, answer;
SELECT (SELECT version FROM gpudl.programs WHERE name = 'kc') AS version, * FROM kc_state;

-- a kept graph answers as one read for the call, query by query and for a whole split
CREATE TABLE kc_split AS SELECT 'sib'::text AS r, p AS s, NULL::text AS o FROM (SELECT DISTINCT c AS p FROM kc_parent) x
  UNION ALL SELECT 'half', NULL, 'lisa' UNION ALL SELECT 'parent', 'homer', NULL;
CREATE TABLE kc_kept AS SELECT * FROM gpudl_predict('kc', NULL, 'kc_split', "limit" => 0);
SELECT hits > 0 AS reused FROM kc_state;
SET gpudl.kg_cache = off;
CREATE TABLE kc_read AS SELECT * FROM gpudl_predict('kc', NULL, 'kc_split', "limit" => 0);
SELECT count(*) FROM kc_state;
RESET gpudl.kg_cache;
SELECT count(*) > 10 AS many, count(*) FILTER (WHERE r IS NULL) AS only_kept,
       count(*) FILTER (WHERE k IS NULL) AS only_read
  FROM (SELECT row(k.*) AS k, row(r.*) AS r FROM kc_kept k FULL JOIN kc_read r
        ON (k.query, k.answer, k.score, k.rank, k.rules) = (r.query, r.answer, r.score, r.rank, r.rules)) j;

-- another role: its own graph, never the one kept for the owner
SET ROLE kgc_reader;
SELECT count(*) FROM kc_state;
SELECT answer, rank FROM gpudl_predict('kc', 'sib', 'sib("maggie", Y)', "limit" => 0) ORDER BY rank, answer;
SELECT program, hits FROM kc_state;
RESET ROLE;
-- a role that may use the program but not read its tables is refused, kept graph or not
SELECT count(*) FROM gpudl_predict('kc', 'sib', 'sib("maggie", Y)', "limit" => 0);
SET ROLE kgc_other;
SELECT count(*) FROM gpudl_predict('kc', 'sib', 'sib("maggie", Y)', "limit" => 0);
RESET ROLE;
-- the reader loses SELECT: refused at once, although this session read the graph for it
SET ROLE kgc_reader;
SELECT count(*) FROM gpudl_predict('kc', 'sib', 'sib("maggie", Y)', "limit" => 0);
RESET ROLE;
REVOKE SELECT ON kc_parent FROM kgc_reader;
SET ROLE kgc_reader;
SELECT count(*) FROM gpudl_predict('kc', 'sib', 'sib("maggie", Y)', "limit" => 0);
RESET ROLE;

-- row-level security for the caller: read per call, rows as the policy shows them
GRANT SELECT ON kc_parent TO kgc_reader;
SET ROLE kgc_reader;
SELECT count(*) FROM gpudl_predict('kc', 'sib', 'sib("maggie", Y)', "limit" => 0);
SELECT count(*) FROM kc_state;
RESET ROLE;
ALTER TABLE kc_parent ENABLE ROW LEVEL SECURITY;
CREATE POLICY kc_no_homer ON kc_parent FOR SELECT TO kgc_reader USING (p <> 'homer');
SET ROLE kgc_reader;
SELECT answer, rank FROM gpudl_predict('kc', 'sib', 'sib("maggie", Y)', "limit" => 0) ORDER BY rank, answer;
SELECT count(*) FROM kc_state;
RESET ROLE;
ALTER TABLE kc_parent DISABLE ROW LEVEL SECURITY;

-- a disabled change trigger: changes are no longer counted, nothing is kept
ALTER TABLE kc_sib DISABLE TRIGGER gpudl_cache_invalidate;
SELECT count(*) FROM gpudl_predict('kc', 'sib', 'sib("maggie", Y)', "limit" => 0);
SELECT count(*) FROM kc_state;
ALTER TABLE kc_sib ENABLE TRIGGER gpudl_cache_invalidate;

-- a relation the graph leaves out: its NOTICE once per call, read or kept
CREATE TABLE kc_loc(p text, at point);
INSERT INTO kc_loc VALUES ('bart', '(1,2)');
SELECT gpudl_bind('kc', 'loc', 'kc_loc');
SELECT gpudl_load('kc_loc') AS loaded;
SET client_min_messages = notice;
SELECT count(*) FROM gpudl_predict('kc', 'sib', 'sib("maggie", Y)', "limit" => 0);
SELECT count(*) FROM gpudl_predict('kc', 'sib', 'sib("maggie", Y)', "limit" => 0);
RESET client_min_messages;
SELECT program, hits FROM kc_state;
DELETE FROM gpudl.bindings WHERE program = 'kc' AND predicate = 'loc';
SELECT gpudl_unload('kc_loc');
DROP TABLE kc_loc;

-- gpudl_mine reuses the graph too
SELECT count(*) FROM gpudl_predict('kc', 'sib', 'sib("maggie", Y)', "limit" => 0);
SELECT count(*) > 0 AS mined FROM gpudl_mine('kc', 'sib', max_body => 2);
SELECT hits FROM kc_state;

-- a graph of views over one loaded table (how bench/kg/load.sql binds a
-- knowledge graph): kept, and read again when the table changes or a view
-- is defined anew; a view with a mutable function is not kept
CREATE TABLE kc_triples(h text, r text, t text);
INSERT INTO kc_triples SELECT p, 'parent', c FROM kc_parent UNION ALL SELECT a, 'sib', b FROM kc_sib;
CREATE VIEW kc_v_parent AS SELECT h, t FROM kc_triples WHERE r = 'parent';
CREATE VIEW kc_v_sib AS SELECT h, t FROM kc_triples WHERE r = 'sib';
CREATE VIEW kc_v_sib2 AS SELECT * FROM kc_v_sib;
SELECT gpudl_create_program('kv');
SELECT gpudl_bind('kv', 'parent', 'kc_v_parent');
SELECT gpudl_bind('kv', 'sib', 'kc_v_sib2');
SELECT count(*) FROM gpudl_mine('kv', 'sib', max_body => 2, commit => true);
SELECT count(*) FROM gpudl_predict('kv', 'sib', 'sib("maggie", Y)', "limit" => 0);
SELECT count(*) FROM kc_state;
SELECT gpudl_load('kc_triples') > 0 AS loaded;
SELECT answer FROM gpudl_predict('kv', 'sib', 'sib("maggie", Y)', "limit" => 0) ORDER BY answer;
SELECT answer FROM gpudl_predict('kv', 'sib', 'sib("maggie", Y)', "limit" => 0) ORDER BY answer;
SELECT program, facts, hits FROM kc_state;
INSERT INTO kc_triples VALUES ('homer', 'parent', 'yan');
SELECT answer FROM gpudl_predict('kv', 'sib', 'sib("maggie", Y)', "limit" => 0) ORDER BY answer;
SELECT program, facts, hits FROM kc_state;
CREATE OR REPLACE VIEW kc_v_parent AS SELECT h, t FROM kc_triples WHERE r = 'parent' AND t <> 'yan';
SELECT answer FROM gpudl_predict('kv', 'sib', 'sib("maggie", Y)', "limit" => 0) ORDER BY answer;
SELECT program, facts, hits FROM kc_state;
-- a call whose queries call gpudl_predict on another program: the inner
-- call replaces the kept graph while the outer one still answers from it
SELECT count(*) FROM gpudl_predict('kc', NULL, 'kc_split', "limit" => 0);
SELECT count(*) FROM gpudl_predict('kc', NULL,
  $$SELECT r, s, o FROM kc_split WHERE (SELECT count(*) FROM gpudl_predict('kv', 'sib', 'sib("maggie", Y)', "limit" => 0)) > 0$$,
  "limit" => 0);
SELECT program FROM kc_state;
CREATE OR REPLACE VIEW kc_v_parent AS SELECT h, t FROM kc_triples WHERE r = 'parent' AND now() > '2000-01-01';
SELECT count(*) FROM gpudl_predict('kv', 'sib', 'sib("maggie", Y)', "limit" => 0);
SELECT count(*) FROM kc_state;
SELECT gpudl_unload('kc_triples');
SELECT gpudl_drop_program('kv');
DROP TABLE kc_triples CASCADE;

-- the rules gpudl_mine(commit => true) stores are handed to the kept graph
-- as the next call would parse them (not read back): after the run the
-- graph holds them all, and a whole split over rules of every form
-- (constants in the head and the body, open atoms) answers exactly as
-- with the rules read back from gpudl.mined_rules
SELECT count(*) AS mined FROM gpudl_mine('kc', NULL, max_body => 2, commit => true, constants => true,
  constants_min_head_coverage => 0) \gset
SELECT :mined > 20 AS many, rules = :mined AS all_kept, hits FROM kc_state;
SELECT count(DISTINCT target) > 1 AS relations,
       count(*) FILTER (WHERE rule ~ '^[a-z]+\(X, "') > 0 AS head_constants,
       count(*) FILTER (WHERE rule ~ ':-.*"') > 0 AS body_constants
  FROM gpudl.mined_rules WHERE program = 'kc';
-- a call asking one relation reads no rules back (read back, the graph
-- would hold that relation's rules only)
SELECT count(*) > 0 AS answered FROM gpudl_predict('kc', 'sib', 'sib("maggie", Y)', "limit" => 0);
SELECT rules = :mined AS none_read, hits FROM kc_state;
CREATE TABLE kc_seeded AS SELECT * FROM gpudl_predict('kc', NULL, 'kc_split', "limit" => 0);
SET gpudl.kg_cache = off;
CREATE TABLE kc_reread AS SELECT * FROM gpudl_predict('kc', NULL, 'kc_split', "limit" => 0);
RESET gpudl.kg_cache;
SELECT count(*) > 10 AS many, count(*) FILTER (WHERE r IS NULL) AS only_seeded,
       count(*) FILTER (WHERE k IS NULL) AS only_read
  FROM (SELECT row(k.*) AS k, row(r.*) AS r FROM kc_seeded k FULL JOIN kc_reread r
        ON (k.query, k.answer, k.score, k.rank, k.rules) = (r.query, r.answer, r.score, r.rank, r.rules)) j;
-- a committing run rolled back: the graph it seeded goes too, and the
-- rules stored before it answer as before
BEGIN;
SELECT count(*) > 0 AS mined FROM gpudl_mine('kc', 'sib', max_body => 1, commit => true);
SELECT count(*) AS kept FROM kc_state;
ROLLBACK;
SELECT count(*) AS kept FROM kc_state;
CREATE TABLE kc_after AS SELECT * FROM gpudl_predict('kc', NULL, 'kc_split', "limit" => 0);
SELECT count(*) FILTER (WHERE r IS NULL) AS only_after, count(*) FILTER (WHERE k IS NULL) AS only_read
  FROM (SELECT row(k.*) AS k, row(r.*) AS r FROM kc_after k FULL JOIN kc_reread r
        ON (k.query, k.answer, k.score, k.rank, k.rules) = (r.query, r.answer, r.score, r.rank, r.rules)) j;
-- one relation mined again: its rules kept, the others read when asked
SELECT count(*) AS sib_mined FROM gpudl_mine('kc', 'sib', max_body => 2, commit => true) \gset
SELECT rules = :sib_mined AS only_sib FROM kc_state;
CREATE TABLE kc_one AS SELECT * FROM gpudl_predict('kc', NULL, 'kc_split', "limit" => 0);
SET gpudl.kg_cache = off;
CREATE TABLE kc_one_read AS SELECT * FROM gpudl_predict('kc', NULL, 'kc_split', "limit" => 0);
RESET gpudl.kg_cache;
SELECT count(*) FILTER (WHERE r IS NULL) AS only_seeded, count(*) FILTER (WHERE k IS NULL) AS only_read
  FROM (SELECT row(k.*) AS k, row(r.*) AS r FROM kc_one k FULL JOIN kc_one_read r
        ON (k.query, k.answer, k.score, k.rank, k.rules) = (r.query, r.answer, r.score, r.rank, r.rules)) j;
DROP TABLE kc_seeded, kc_reread, kc_after, kc_one, kc_one_read;

DROP VIEW kc_state;
SELECT gpudl_unload('kc_parent'), gpudl_unload('kc_sib');
SELECT gpudl_drop_program('kc');
DROP TABLE kc_parent, kc_sib, kc_split, kc_kept, kc_read;
DROP ROLE kgc_reader;
DROP ROLE kgc_other;
