-- 50_owners: programs have owners (issue 11).  alice owns a program over her
-- own table; bob may do nothing with it until granted, then only what he was
-- granted; carol, a member of alice's role, may do what alice may.  Every
-- refusal is 42501, names the program and its owner, and changes nothing.
\set VERBOSITY default
SET client_min_messages = warning;
DROP ROLE IF EXISTS carol;
DROP ROLE IF EXISTS bob;
DROP ROLE IF EXISTS alice;
CREATE ROLE alice;
CREATE ROLE bob;
CREATE ROLE carol IN ROLE alice;
RESET client_min_messages;
CREATE SCHEMA alice_s AUTHORIZATION alice;
GRANT USAGE ON SCHEMA alice_s TO bob;
CREATE SCHEMA bob_s AUTHORIZATION bob;

-- alice's data and program
SET ROLE alice;
CREATE TABLE alice_s.parent(p text, c text);
INSERT INTO alice_s.parent VALUES ('a', 'b'), ('b', 'c'), ('c', 'd'), ('d', 'e');
CREATE TABLE alice_s.secret(p text, c text);
INSERT INTO alice_s.secret VALUES ('x', 'y');
CREATE TABLE alice_s.anc_out(a text, b text);
GRANT SELECT ON alice_s.parent TO bob;
SELECT gpudl_create_program('fam', description => 'ancestors');
SELECT gpudl_bind('fam', 'par', 'alice_s.parent');
SELECT count(*) AS added FROM gpudl_add_rules('fam', 'anc(X, Y) :- par(X, Y).  anc(X, Z) :- anc(X, Y), par(Y, Z).');
SELECT count(*) FROM gpudl_query('fam', 'anc(X, Y)') AS t(a text, b text);
RESET ROLE;
SELECT name, owner, acl, version FROM gpudl.programs WHERE name IN ('fam', 'bobs', 'fake') ORDER BY name;

-- what a check that nothing changed looks at (as superuser)
CREATE VIEW fam_state AS
  SELECT (SELECT version FROM gpudl.programs WHERE name = 'fam') AS version,
         (SELECT description FROM gpudl.programs WHERE name = 'fam') AS description,
         (SELECT string_agg(rule, ' ' ORDER BY id) FROM gpudl.rules WHERE program = 'fam') AS rules,
         (SELECT string_agg(predicate || '=' || relation::text, ' ') FROM gpudl.bindings WHERE program = 'fam') AS bindings;
SELECT * FROM fam_state;

-- bob, without any grant: every use and every change is refused
SET ROLE bob;
SELECT gpudl_add_rules('fam', 'anc(X, X) :- par(X, _).');
\echo :LAST_ERROR_SQLSTATE
SELECT gpudl_drop_program('fam');
\echo :LAST_ERROR_SQLSTATE
SELECT gpudl_bind('fam', 'par', 'alice_s.secret');
\echo :LAST_ERROR_SQLSTATE
SELECT gpudl_commit_rule('fam', 'anc(X, X) :- par(X, _).');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM gpudl_query('fam', 'anc(X, Y)') AS t(a text, b text);
\echo :LAST_ERROR_SQLSTATE
SELECT gpudl_count('fam', 'anc("a", Y)');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM gpudl_explain('fam');
\echo :LAST_ERROR_SQLSTATE
-- the GpuDatalog scan reads the program when EXPLAIN shows it
EXPLAIN (COSTS OFF) SELECT * FROM gpudl_query('fam', 'anc(X, Y)') AS t(a text, b text) WHERE a = 'a';
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM gpudl_derivations('fam', 'anc("a", "b")');
\echo :LAST_ERROR_SQLSTATE
SELECT gpudl_materialize('fam', 'anc', 'bob_s.anc_copy');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM gpudl_learn('fam', 'gp', 'SELECT * FROM (VALUES (''a'', ''c'')) v(x, y)');
\echo :LAST_ERROR_SQLSTATE
SELECT gpudl_grant('fam', 'bob', 'use');
\echo :LAST_ERROR_SQLSTATE
-- the program is there for everyone to see, its rules and bindings are not
SELECT name, owner FROM gpudl.programs WHERE name = 'fam';
SELECT count(*) AS rules_bob_sees FROM gpudl.rules WHERE program = 'fam';
SELECT count(*) AS bindings_bob_sees FROM gpudl.bindings WHERE program = 'fam';
-- direct DML: inserting is refused; rows bob cannot see are not there for him
INSERT INTO gpudl.rules(program, rule) VALUES ('fam', 'anc(X, X) :- par(X, _).');
\echo :LAST_ERROR_SQLSTATE
INSERT INTO gpudl.bindings(program, predicate, relation) VALUES ('fam', 'other', 'alice_s.parent');
\echo :LAST_ERROR_SQLSTATE
UPDATE gpudl.rules SET enabled = false WHERE program = 'fam';
DELETE FROM gpudl.rules WHERE program = 'fam';
UPDATE gpudl.programs SET description = 'mine now' WHERE name = 'fam';
\echo :LAST_ERROR_SQLSTATE
UPDATE gpudl.programs SET owner = 'bob' WHERE name = 'fam';
\echo :LAST_ERROR_SQLSTATE
DELETE FROM gpudl.programs WHERE name = 'fam';
\echo :LAST_ERROR_SQLSTATE
INSERT INTO gpudl.programs(name, owner) VALUES ('fake', 'alice');
\echo :LAST_ERROR_SQLSTATE
-- bob's own program: a binding to a table bob cannot read is refused
SELECT gpudl_create_program('bobs');
SELECT gpudl_bind('bobs', 's', 'alice_s.secret');
\echo :LAST_ERROR_SQLSTATE
INSERT INTO gpudl.bindings(program, predicate, relation) VALUES ('bobs', 's', 'alice_s.secret');
\echo :LAST_ERROR_SQLSTATE
SELECT gpudl_bind('bobs', 's', 'alice_s.parent');
SELECT count(*) AS added FROM gpudl_add_rules('bobs', 'q(X) :- s(X, _).');
SELECT gpudl_count('bobs', 'q(X)');
RESET ROLE;
SELECT * FROM fam_state;
SELECT name, owner FROM gpudl.programs WHERE name IN ('fam', 'bobs', 'fake') ORDER BY name;
SELECT program, predicate, relation FROM gpudl.bindings WHERE program IN ('fam', 'bobs') ORDER BY 1, 2;

-- alice grants use: bob may query, read the rules and learn, not change
SET ROLE alice;
SELECT gpudl_grant('fam', 'bob', 'use');
SELECT * FROM gpudl.program_privileges;
SET ROLE bob;
SELECT * FROM gpudl_query('fam', 'anc("a", Y)') AS t(a text, b text) ORDER BY b;
SELECT gpudl_count('fam', 'anc(X, Y)');
SELECT rule FROM gpudl.rules WHERE program = 'fam' ORDER BY id;
SELECT gpudl_add_rules('fam', 'anc(X, X) :- par(X, _).');
\echo :LAST_ERROR_SQLSTATE
UPDATE gpudl.rules SET enabled = false WHERE program = 'fam';
\echo :LAST_ERROR_SQLSTATE
DELETE FROM gpudl.rules WHERE program = 'fam';
\echo :LAST_ERROR_SQLSTATE
DELETE FROM gpudl.bindings WHERE program = 'fam';
\echo :LAST_ERROR_SQLSTATE
SELECT gpudl_bind('fam', 'par2', 'alice_s.parent');
\echo :LAST_ERROR_SQLSTATE
SELECT gpudl_drop_program('fam');
\echo :LAST_ERROR_SQLSTATE
SELECT gpudl_revoke('fam', 'bob', 'use');
\echo :LAST_ERROR_SQLSTATE
-- materialize into alice's table: PostgreSQL's own privilege check refuses
SELECT gpudl_materialize('fam', 'anc', 'alice_s.anc_out', 'append');
\echo :LAST_ERROR_SQLSTATE
-- ... into his own table it works
SELECT gpudl_materialize('fam', 'anc', 'bob_s.anc_copy');
-- learning: allowed without commit, refused with commit (and not recorded)
SELECT rank, rule FROM gpudl_learn('fam', 'gp', 'SELECT * FROM (VALUES (''a'', ''c''), (''b'', ''d''), (''c'', ''e'')) v(x, y)', max_rules => 1);
SELECT * FROM gpudl_learn('fam', 'gp', 'SELECT * FROM (VALUES (''a'', ''c''), (''b'', ''d''), (''c'', ''e'')) v(x, y)', max_rules => 1, commit => true);
\echo :LAST_ERROR_SQLSTATE
-- a failed run is recorded as bob's, by the background worker
SELECT * FROM gpudl_learn('fam', 'gp', 'SELECT 1, 2, 3, 4, 5, 6, 7, 8, 9');
RESET ROLE;
SELECT * FROM fam_state;
SELECT count(*) AS rows_in_anc_out FROM alice_s.anc_out;
SELECT count(*) AS rows_in_anc_copy FROM bob_s.anc_copy;

-- learn history: alice learns too; bob sees his runs only, alice (the
-- program's owner) sees all runs of fam
SET ROLE alice;
SELECT count(*) FROM gpudl_learn('fam', 'gp', 'SELECT * FROM (VALUES (''a'', ''c''), (''b'', ''d'')) v(x, y)', max_rules => 1);
SELECT target, status, run_by, params->>'commit' AS commit FROM gpudl.learn_runs ORDER BY id;
SELECT count(*) AS learned_rules_alice_sees FROM gpudl.learned_rules;
SET ROLE bob;
SELECT target, status, run_by FROM gpudl.learn_runs ORDER BY id;
SELECT count(*) AS learned_rules_bob_sees FROM gpudl.learned_rules;
UPDATE gpudl.learn_runs SET message = 'hidden' WHERE run_by = 'alice'::regrole;
INSERT INTO gpudl.learn_runs(program, target, status, run_by) VALUES ('fam', 'gp', 'failed', 'alice');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT run_by, count(*) FROM gpudl.learn_runs WHERE program = 'fam' GROUP BY 1 ORDER BY 1;
SELECT count(*) AS messages_hidden FROM gpudl.learn_runs WHERE message = 'hidden';

-- revoke: bob cannot query any more (in the same session, the plan cached)
SET ROLE alice;
SELECT gpudl_revoke('fam', 'bob', 'use');
SELECT * FROM gpudl.program_privileges;
SET ROLE bob;
SELECT gpudl_count('fam', 'anc(X, Y)');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM gpudl_query('fam', 'anc(X, Y)') AS t(a text, b text);
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS rules_bob_sees FROM gpudl.rules WHERE program = 'fam';

-- modify: bob may change rules and bindings and commit, still not drop or grant
SET ROLE alice;
SELECT gpudl_grant('fam', 'bob', 'modify');
SELECT * FROM gpudl.program_privileges;
SET ROLE bob;
SELECT count(*) AS added FROM gpudl_add_rules('fam', 'sib(X, Y) :- par(Z, X), par(Z, Y), X != Y.');
SELECT gpudl_commit_rule('fam', 'gp(X, Z) :- par(X, Y), par(Y, Z).') > 0 AS committed;
SELECT gpudl_bind('fam', 'par', 'alice_s.parent', ARRAY['p', 'c']);
SELECT gpudl_bind('fam', 'par', 'alice_s.secret');
\echo :LAST_ERROR_SQLSTATE
UPDATE gpudl.bindings SET relation = 'alice_s.secret' WHERE program = 'fam';
\echo :LAST_ERROR_SQLSTATE
UPDATE gpudl.rules SET enabled = false WHERE rule LIKE 'sib%';
DELETE FROM gpudl.rules WHERE rule LIKE 'sib%';
SELECT gpudl_count('fam', 'gp(X, Y)');
SELECT gpudl_drop_program('fam');
\echo :LAST_ERROR_SQLSTATE
SELECT gpudl_grant('fam', 'bob', 'use');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT * FROM fam_state;
-- revoking modify leaves use; revoking use takes both
SET ROLE alice;
SELECT gpudl_revoke('fam', 'bob', 'modify');
SELECT * FROM gpudl.program_privileges;
SELECT gpudl_revoke('fam', 'bob', 'use');
SELECT acl FROM gpudl.programs WHERE name = 'fam';

-- PUBLIC
SELECT gpudl_grant('fam', 'PUBLIC', 'use');
SET ROLE bob;
SELECT gpudl_count('fam', 'anc(X, Y)');
SET ROLE alice;
SELECT gpudl_revoke('fam', 'public', 'use');
SET ROLE bob;
SELECT gpudl_count('fam', 'anc(X, Y)');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;

-- carol is a member of alice: she may do what alice may
SET ROLE carol;
SELECT count(*) AS added FROM gpudl_add_rules('fam', 'root(X) :- par(X, _), !haspar(X).  haspar(Y) :- par(_, Y).');
UPDATE gpudl.programs SET description = 'ancestors, roots' WHERE name = 'fam';
SELECT * FROM gpudl_query('fam', 'root(X)') AS t(x text);
SELECT gpudl_grant('fam', 'bob'::regrole, 'use');   -- the role as a regrole works too
SELECT * FROM gpudl.program_privileges;
SELECT gpudl_revoke('fam', 'bob'::regrole, 'use');
RESET ROLE;
SELECT * FROM fam_state;

-- bad arguments
SET ROLE alice;
SELECT gpudl_grant('fam', 'bob', 'write');
SELECT gpudl_grant('fam', 'nobody_here', 'use');
SELECT gpudl_grant('nope', 'bob', 'use');
SELECT gpudl_grant('fam', NULL, 'use');
-- alice may give the program to a role whose privileges she has, not to bob
UPDATE gpudl.programs SET owner = 'bob' WHERE name = 'fam';
\echo :LAST_ERROR_SQLSTATE
SET ROLE carol;
SELECT gpudl_drop_program('fam');
RESET ROLE;
SELECT name, owner FROM gpudl.programs WHERE name IN ('fam', 'bobs', 'fake') ORDER BY name;

-- clean up
SELECT gpudl_drop_program('bobs');
DELETE FROM gpudl.learn_runs WHERE program = 'fam';
DROP VIEW fam_state;
DROP SCHEMA alice_s CASCADE;
DROP SCHEMA bob_s CASCADE;
DROP ROLE carol;
DROP ROLE bob;
DROP ROLE alice;
