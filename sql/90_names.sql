-- 90_names: tables and relations named as real data names them — capitals
-- and blanks ("Has Car"), Freebase paths of FB15k-237 ('/film/film/genre',
-- '/tv/tv_program/regular_cast./tv/regular_tv_appearance/actor'), UMLS's
-- 'co-occurs_with', WN18RR's '_hypernym', 'Parent', 'é' — bound, written in
-- rules as quoted names, queried, explained, mined and committed, predicted,
-- learned and committed, and read back.  Rule ids are masked (this suite
-- may run alone).
\set VERBOSITY default
SET gpudl.explain_machine_details = off;
CREATE SCHEMA "Names S";
CREATE TABLE "Has Car"("Owner" text, car text);
INSERT INTO "Has Car" VALUES ('ann', 'volvo'), ('bob', 'fiat'), ('cat', 'volvo');
CREATE TABLE "Parent"(p text, c text);
INSERT INTO "Parent" VALUES ('ann', 'bob'), ('ann', 'cat'), ('bob', 'dan'), ('bob', 'eve'),
  ('cat', 'fay'), ('dan', 'gus'), ('eve', 'hal');
CREATE TABLE "é"(x text, y text);            -- grandparent
INSERT INTO "é" VALUES ('ann', 'dan'), ('ann', 'eve'), ('ann', 'fay'), ('bob', 'gus');
CREATE TABLE "Names S"."Hyper Nym"(x text, y text);   -- child of, one fact missing
INSERT INTO "Names S"."Hyper Nym" VALUES ('bob', 'ann'), ('cat', 'ann'), ('dan', 'bob'),
  ('eve', 'bob'), ('fay', 'cat'), ('gus', 'dan');
CREATE TABLE "/film/film/genre"(x text, y text);
INSERT INTO "/film/film/genre" VALUES ('ann', 'bob'), ('bob', 'dan'), ('cat', 'fay');
CREATE TABLE kg_triples(h text, r text, t text);
INSERT INTO kg_triples VALUES
  ('bob', '/tv/tv_program/regular_cast./tv/regular_tv_appearance/actor', 'ann'),
  ('dan', '/tv/tv_program/regular_cast./tv/regular_tv_appearance/actor', 'bob'),
  ('bob', 'co-occurs_with', 'cat'), ('cat', 'co-occurs_with', 'bob'),
  ('dan', 'co-occurs_with', 'eve'), ('eve', 'co-occurs_with', 'dan');
CREATE VIEW "Names S".tv_cast AS
  SELECT h, t FROM kg_triples WHERE r = '/tv/tv_program/regular_cast./tv/regular_tv_appearance/actor';
CREATE VIEW "Names S"."co-occurs" AS SELECT h, t FROM kg_triples WHERE r = 'co-occurs_with';

-- gpudl_bind takes any name; only the empty one is refused (42602)
SELECT gpudl_create_program('names');
SELECT gpudl_bind('names', '/tv/tv_program/regular_cast./tv/regular_tv_appearance/actor', '"Names S".tv_cast');
SELECT gpudl_bind('names', 'co-occurs_with', '"Names S"."co-occurs"');
SELECT gpudl_bind('names', '_hypernym', '"Names S"."Hyper Nym"');
SELECT gpudl_bind('names', '', '"Parent"');
\echo :LAST_ERROR_SQLSTATE
SELECT predicate, relation FROM gpudl.bindings WHERE program = 'names' ORDER BY predicate COLLATE "C";

-- rules with quoted names: unbound ones read the table of that name
SELECT count(*) AS added FROM gpudl_add_rules('names', $$
  "grand parent"(X, Y) :- "Parent"(X, Z), "Parent"(Z, Y).
  'sibling of'(X, Y) :- "co-occurs_with"(X, Y).
  "car owner"(X) :- "Has Car"(X, _).
$$);
SELECT count(*) AS added FROM gpudl_add_rules('names', $$
  "cast ∘ genre"(X, Y) :- "/tv/tv_program/regular_cast./tv/regular_tv_appearance/actor"(X, Z),
                          "/film/film/genre"(Z, Y), !"é"(X, Y).
$$);
SELECT rule FROM gpudl.rules WHERE program = 'names' ORDER BY id;
SELECT * FROM gpudl_query('names', '"grand parent"(X, Y)') AS t(a text, b text) ORDER BY 1, 2;
SELECT * FROM gpudl_query('names', '"cast ∘ genre"(X, Y)') AS t(a text, b text) ORDER BY 1, 2;
SELECT * FROM gpudl_query('names', '''/tv/tv_program/regular_cast./tv/regular_tv_appearance/actor''(X, "ann")')
  AS t(a text, b text);
SELECT gpudl_count('names', '"grand parent"("ann", Y)'), gpudl_count('names', '"é"(X, Y)'),
       gpudl_count('names', '"sibling of"(X, Y)'), gpudl_count('names', '"car owner"(X)');
SELECT regexp_replace(e, '\[rule \d+\]', '[rule N]') AS explain
  FROM gpudl_explain('names') e WHERE e NOT LIKE '%plan%' AND e !~ '^ ' OR e ~ '^  \[rule';
SELECT rule FROM gpudl_derivations('names', '"grand parent"("ann", "dan")');
SELECT rule FROM gpudl_derivations('names', '"cast ∘ genre"("bob", "bob")');
-- materialize writes a table named as the predicate is, quoted in SQL
SELECT gpudl_materialize('names', 'grand parent', '"Names S"."grand parent"');
SELECT * FROM "Names S"."grand parent" ORDER BY 1, 2;
EXPLAIN (COSTS OFF) SELECT * FROM gpudl_query('names', '"grand parent"(X, Y)') AS t(a text, b text) WHERE a = 'bob';

-- a rule symmetric in its head's arguments, over quoted names: the mirror
-- of its first delta version stands for the second, printed quoted
SELECT gpudl_create_program('names_sym', $$
  "linked to"(X, Y) :- "Parent"(X, Y).
  "linked to"(X, Y) :- "co-star"(X, Z), "Parent"(Z, Y).
  "co-star"(X, Y) :- "linked to"(Z, X), "linked to"(Z, Y), X != Y.
$$);
SELECT e AS explain FROM gpudl_explain('names_sym') e WHERE e ~ 'mirror';
SELECT * FROM gpudl_query('names_sym', '"co-star"(X, Y)') AS t(a text, b text) ORDER BY 1, 2;

-- mining: rule text names every relation as the parser reads it back
SELECT target, rule, support, round(pca_confidence::numeric, 3) AS pca
  FROM gpudl_mine('names', 'é', max_body => 2, min_head_coverage => 0.3, min_confidence => 0.5, commit => true)
 ORDER BY rule COLLATE "C";
SELECT target, rule FROM gpudl_mine('names', '_hypernym', max_body => 1, min_confidence => 0.5, commit => true)
 ORDER BY rule COLLATE "C";
SELECT target, rule FROM gpudl_mine('names', 'co-occurs_with', max_body => 1, min_head_coverage => 0.5,
                                    min_confidence => 0.5, commit => true) ORDER BY rule COLLATE "C";
SELECT target, rule FROM gpudl.mined_rules WHERE program = 'names' ORDER BY target COLLATE "C", rule COLLATE "C";
-- the committed rules are read back: prediction with them, query column quoted
SELECT query, answer, rank, rules FROM gpudl_predict('names', '_hypernym', '"_hypernym"(X, "eve")');
SELECT query, answer, rank, rules FROM gpudl_predict('names', '_hypernym', '"_hypernym"("hal", Y)');
SELECT query, answer, rank FROM gpudl_predict('names', 'é', '"é"("bob", Y)');
SELECT query, answer, rank FROM gpudl_predict('names', 'co-occurs_with', 'SELECT ''cat'', NULL::text',
                                              exclude_known => false);
-- mined rules are rules of the language: added to a program they evaluate
SELECT gpudl_create_program('names_mined');
SELECT gpudl_bind('names_mined', predicate, relation) FROM gpudl.bindings WHERE program = 'names';
SELECT count(*) AS added FROM gpudl_add_rules('names_mined', (SELECT string_agg(replace(rule, '"_hypernym"(X, Y) :-', '"child of"(X, Y) :-'), ' ')
  FROM gpudl.mined_rules WHERE program = 'names' AND target = '_hypernym'));
SELECT * FROM gpudl_query('names_mined', '"child of"(X, Y)') AS t(a text, b text) ORDER BY 1, 2;

-- learning: the target and background named anyhow, committed, queried back
CREATE TABLE "Child Pos"(a text, b text);
INSERT INTO "Child Pos" SELECT c, p FROM "Parent";
SELECT rank, rule, round(precision::numeric, 2) AS prec, round(recall::numeric, 2) AS rec
  FROM gpudl_learn('names', 'Child-Of', '"Child Pos"', max_body => 1, commit => true) ORDER BY rank;
SELECT rule, learned FROM gpudl.rules WHERE program = 'names' AND learned ORDER BY id;
SELECT * FROM gpudl_query('names', '"Child-Of"(X, "bob")') AS t(a text, b text) ORDER BY 1;
SELECT count(*) FROM gpudl_query('names', '"Child-Of"(X, Y)') AS t(a text, b text);
SELECT rule FROM gpudl_derivations('names', '"Child-Of"("hal", "eve")');
SELECT rank, rule FROM gpudl_learn('names', 'Child-Of', '"Child Pos"', max_body => 2,
                                   types => '"Child-Of"(person, person); "Parent"(person, person)',
                                   method => 'refine') ORDER BY rank;

-- the quoted form's errors
SELECT gpudl_add_rules('names', $$p(X) :- "Parent(X, Y).$$);
SELECT gpudl_add_rules('names', $$""(X) :- "Parent"(X, _).$$);
\echo :LAST_ERROR_SQLSTATE
SELECT gpudl_add_rules('names', $$p(X) :- "Parent"(X, Y), Y = "bob"(X).$$);
SELECT gpudl_add_rules('names', $$"/a/b"(X) :- Parent(X, _).$$);
SELECT gpudl_add_rules('names', $$_hypernym(X, Y) :- "Parent"(X, Y).$$);
SELECT gpudl_add_rules('names', $$names.x(X, Y) :- "Parent"(X, Y).$$);
SELECT count(*) AS added FROM gpudl_add_rules('names', $$.decl "declared, no rows"(a: text)$$);
SELECT gpudl_count('names', '"declared, no rows"(X)');
SELECT * FROM gpudl_learn('names', 'names.x', '"Child Pos"');
SELECT * FROM gpudl_learn('names', '', '"Child Pos"');
\echo :LAST_ERROR_SQLSTATE
SELECT gpudl_add_rules('names', $$"x y" :- "Parent"(X, _).$$);
SELECT gpudl_add_rules('names', $$q(X) :- "no such table"(X).$$);
SELECT gpudl_add_rules('names', $$q(X) :- "/a/b./c/d"(X).$$);
SELECT * FROM gpudl_query('names', '"Parent"(X') AS t(a text);
SELECT * FROM gpudl_learn('names', 'x', 'SELECT 1', types => '"unclosed(t)');
SELECT * FROM gpudl_predict('names', 'é', '"é"(X, Y)');
SELECT * FROM gpudl_predict('names', 'é', '"grand parent"("ann", Y)');
SELECT gpudl_drop_program('names');
SELECT gpudl_drop_program('names_mined');
