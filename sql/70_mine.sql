-- 70_mine: gpudl_mine over a small family graph whose rules are known: the
-- grandparent table is exactly parent∘parent, child is parent reversed
-- (a derived predicate), a partial sibling table.  Thresholds, the
-- relation of another type left out with a NOTICE, commit into
-- gpudl.mined_rules (replacing, per target), privileges, errors.
\set VERBOSITY default
SET client_min_messages = warning;
DROP ROLE IF EXISTS mine_user;
DROP ROLE IF EXISTS mine_other;
DROP ROLE IF EXISTS mine_owner;
CREATE ROLE mine_owner;
CREATE ROLE mine_user;
CREATE ROLE mine_other;
RESET client_min_messages;
CREATE SCHEMA mine_s AUTHORIZATION mine_owner;
GRANT USAGE ON SCHEMA mine_s TO mine_user, mine_other;

SET ROLE mine_owner;
CREATE TABLE mine_s.parent(p text, c text);
INSERT INTO mine_s.parent VALUES ('ann', 'bob'), ('ann', 'cat'), ('bob', 'dan'), ('bob', 'eve'),
  ('cat', 'fay'), ('dan', 'gus'), ('dan', 'gus');  -- a duplicate counts once
CREATE TABLE mine_s.grand(x text, y text);
INSERT INTO mine_s.grand VALUES ('ann', 'dan'), ('ann', 'eve'), ('ann', 'fay'), ('bob', 'gus');
CREATE TABLE mine_s.sib(x text, y text);
INSERT INTO mine_s.sib VALUES ('bob', 'cat'), ('cat', 'bob'), ('dan', 'eve');
CREATE TABLE mine_s.age(p text, years int);
INSERT INTO mine_s.age VALUES ('ann', 80), ('bob', 55);
GRANT SELECT ON mine_s.parent, mine_s.grand, mine_s.sib, mine_s.age TO mine_user;
SELECT gpudl_create_program('kin');
SELECT gpudl_bind('kin', 'par', 'mine_s.parent');
SELECT gpudl_bind('kin', 'gp', 'mine_s.grand');
SELECT gpudl_bind('kin', 'sib', 'mine_s.sib');
SELECT gpudl_bind('kin', 'age', 'mine_s.age');
SELECT count(*) FROM gpudl_add_rules('kin', 'child(X, Y) :- par(Y, X).  old(X) :- age(X, N), N > 60.');

-- every rule for gp up to two body atoms; gp = par∘par holds exactly
SELECT rule, support, head_coverage, std_confidence, pca_confidence, body_size, pca_body_size
  FROM gpudl_mine('kin', 'gp', max_body => 2) ORDER BY rule;
SET client_min_messages = warning;  -- the NOTICE about age once per kind of graph
-- the exact rule is there however it is written (par or child, in any order)
SELECT count(*) AS exact_rules FROM gpudl_mine('kin', 'gp', max_body => 2)
 WHERE support = 4 AND std_confidence = 1 AND head_coverage = 1;
-- thresholds: one body atom has no rule for gp; confidence, coverage and support filter
SELECT count(*) AS one_atom FROM gpudl_mine('kin', 'gp', max_body => 1);
SELECT bool_and(pca_confidence >= 0.9) AS all_confident, count(*) > 0 AS some
  FROM gpudl_mine('kin', 'gp', max_body => 2, min_confidence => 0.9);
SELECT count(*) AS none_over_support_4 FROM gpudl_mine('kin', 'gp', max_body => 2, min_support => 5);
SELECT bool_and(head_coverage >= 0.75) AS all_covering
  FROM gpudl_mine('kin', 'gp', max_body => 2, min_head_coverage => 0.75);

-- every relation: child (derived) and par are each other's reverse; age is left out
RESET client_min_messages;
SELECT target, rule, support, std_confidence
  FROM gpudl_mine('kin', max_body => 1, min_confidence => 0.5) ORDER BY target, rule;
SET client_min_messages = warning;
-- measures agree with their definitions on every rule
SELECT bool_and(abs(std_confidence - support::float8 / body_size) < 1e-12
                AND abs(pca_confidence - support::float8 / pca_body_size) < 1e-12
                AND pca_body_size <= body_size AND support <= pca_body_size) AS measures_consistent
  FROM gpudl_mine('kin', max_body => 2, min_head_coverage => 0, min_confidence => 0);

-- commit stores the rules of the mined target, replacing earlier ones
SELECT count(*) AS mined FROM gpudl_mine('kin', 'gp', max_body => 2, commit => true);
SELECT target, count(*), min(mined_by::text) AS mined_by, min(params->>'max_body') AS max_body
  FROM gpudl.mined_rules WHERE program = 'kin' GROUP BY target;
SELECT count(*) AS mined FROM gpudl_mine('kin', 'sib', max_body => 1, min_confidence => 0.5, commit => true);
SELECT count(*) AS mined FROM gpudl_mine('kin', 'gp', max_body => 2, min_confidence => 0.9, commit => true);
SELECT target, rule, support, body_size, nbody FROM gpudl.mined_rules WHERE program = 'kin' ORDER BY target, rule;
-- mining every relation with commit replaces every relation's rules
SELECT count(*) > 0 AS mined FROM gpudl_mine('kin', max_body => 1, min_confidence => 0.5, commit => true);
SELECT target, count(*) FROM gpudl.mined_rules WHERE program = 'kin' GROUP BY target ORDER BY target;
RESET ROLE;

-- privileges: 'use' mines without commit; commit needs 'modify'
SET ROLE mine_user;
SELECT count(*) FROM gpudl_mine('kin', 'gp');
RESET ROLE;
SET ROLE mine_owner;
SELECT gpudl_grant('kin', 'mine_user', 'use');
RESET ROLE;
SET ROLE mine_user;
SELECT count(*) > 0 AS mined FROM gpudl_mine('kin', 'gp', max_body => 2);
SELECT count(*) FROM gpudl_mine('kin', 'gp', max_body => 2, commit => true);
\echo :LAST_ERROR_SQLSTATE
-- the rows are visible to a user of the program, but not writable
SELECT count(*) > 0 AS sees_rules FROM gpudl.mined_rules WHERE program = 'kin';
DELETE FROM gpudl.mined_rules WHERE program = 'kin';
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
-- a role without 'use' sees no mined rules and may not mine
SET ROLE mine_other;
SELECT count(*) AS sees FROM gpudl.mined_rules WHERE program = 'kin';
SELECT count(*) FROM gpudl_mine('kin', 'gp');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
-- 'modify' may commit, but rules never read a table the caller cannot read
SET ROLE mine_owner;
SELECT gpudl_grant('kin', 'mine_other', 'modify');
RESET ROLE;
SET ROLE mine_other;
SELECT count(*) FROM gpudl_mine('kin', 'gp', commit => true);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SET ROLE mine_user;
SELECT count(*) > 0 AS mined FROM gpudl_mine('kin', 'gp', max_body => 2);
RESET ROLE;
-- the failed calls changed nothing
SELECT target, count(*) FROM gpudl.mined_rules WHERE program = 'kin' GROUP BY target ORDER BY target;
-- 'modify' with the tables readable commits (row-level security on
-- gpudl.mined_rules applies to the role): the rows name who mined them,
-- and the same rules as the owner's (ids after theirs)
SET ROLE mine_owner;
GRANT SELECT ON mine_s.parent, mine_s.grand, mine_s.sib, mine_s.age TO mine_other;
RESET ROLE;
CREATE TEMP TABLE kin_before AS SELECT id, target, rule, support FROM gpudl.mined_rules WHERE program = 'kin' AND target = 'sib';
SET ROLE mine_other;
SELECT count(*) AS mined FROM gpudl_mine('kin', 'sib', max_body => 1, min_confidence => 0.5, commit => true);
RESET ROLE;
SELECT target, count(*), min(mined_by::text) AS mined_by FROM gpudl.mined_rules WHERE program = 'kin' GROUP BY target ORDER BY target;
SELECT (SELECT array_agg(rule ORDER BY id) FROM kin_before) = (SELECT array_agg(rule ORDER BY id) FROM gpudl.mined_rules WHERE program = 'kin' AND target = 'sib') AS same_rules,
       (SELECT min(id) FROM gpudl.mined_rules WHERE program = 'kin' AND target = 'sib') > (SELECT max(id) FROM kin_before) AS new_ids;
-- a cluster that took INSERT on gpudl.mined_rules away: refused, nothing stored
REVOKE INSERT ON gpudl.mined_rules FROM PUBLIC;
SET ROLE mine_other;
SELECT count(*) FROM gpudl_mine('kin', 'sib', max_body => 1, min_confidence => 0.5, commit => true);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
GRANT INSERT ON gpudl.mined_rules TO PUBLIC;
SELECT count(*) AS sib_rules, min(mined_by::text) AS mined_by FROM gpudl.mined_rules WHERE program = 'kin' AND target = 'sib';
SET ROLE mine_owner;
REVOKE SELECT ON mine_s.parent, mine_s.grand, mine_s.sib, mine_s.age FROM mine_other;
RESET ROLE;

-- rules with constants (0.4): a graph known by hand.  speaks: ann-fr,
-- bob-fr, cat-it, dan-en; lives: ann, bob, dan, eve in paris, cat in rome.
-- With one body atom, speaks has exactly five:
--   speaks(X, "fr") :- lives(X, "paris")  support 2, body 4 (ann bob dan eve),
--                                         PCA body 3 (eve speaks nothing)
--   speaks(X, "en") :- lives(X, "paris")  1 / 4 / 3
--   speaks(X, "it") :- lives(X, "rome")   1 / 1 / 1
--   speaks("ann", X) :- speaks("bob", X)  and back: 1 / 1 / 1
SET ROLE mine_owner;
CREATE TABLE mine_s.speaks(p text, lang text);
INSERT INTO mine_s.speaks VALUES ('ann', 'fr'), ('bob', 'fr'), ('cat', 'it'), ('dan', 'en');
CREATE TABLE mine_s.lives(p text, city text);
INSERT INTO mine_s.lives VALUES ('ann', 'paris'), ('bob', 'paris'), ('cat', 'rome'), ('dan', 'paris'), ('eve', 'paris');
SELECT gpudl_create_program('lang');
SELECT gpudl_bind('lang', 'speaks', 'mine_s.speaks');
SELECT gpudl_bind('lang', 'lives', 'mine_s.lives');
SELECT rule, support, head_coverage, std_confidence, round(pca_confidence::numeric, 4) AS pca,
       body_size, pca_body_size
  FROM gpudl_mine('lang', 'speaks', max_body => 1, min_head_coverage => 0, min_confidence => 0,
                  constants => true) ORDER BY rule;
-- without constants there is none; min_support prunes the constants' choices
SELECT count(*) AS without_constants
  FROM gpudl_mine('lang', 'speaks', max_body => 1, min_head_coverage => 0, min_confidence => 0);
SELECT rule FROM gpudl_mine('lang', 'speaks', max_body => 1, min_support => 2, constants => true);
-- two body atoms, every relation: more rules, each measured as its definition says
SELECT count(*) > 5 AS more_rules,
       bool_and(abs(std_confidence - support::float8 / body_size) < 1e-12
                AND abs(pca_confidence - support::float8 / pca_body_size) < 1e-12
                AND pca_body_size <= body_size AND support <= pca_body_size) AS measures_consistent
  FROM gpudl_mine('lang', max_body => 2, min_head_coverage => 0, min_confidence => 0, constants => true);
-- a path to a constant, by hand: lives(X, "paris") :- speaks(X, Z), speaks("bob", Z):
-- ann and bob (both speak fr), both in paris
SELECT rule, support, body_size, pca_body_size
  FROM gpudl_mine('lang', 'lives', max_body => 2, constants => true)
 WHERE rule = 'lives(X, "paris") :- speaks(X, Z), speaks("bob", Z).';
-- commit stores the constants as goal literals; the parameters say constants
SELECT count(*) AS mined FROM gpudl_mine('lang', 'speaks', max_body => 1, min_head_coverage => 0,
                                         min_confidence => 0, commit => true, constants => true);
SELECT rule, params->>'constants' AS constants FROM gpudl.mined_rules WHERE program = 'lang' ORDER BY rule;
-- 0.5: max_body_constants 1 drops the two-atom rules with constants and
-- keeps every other rule of the full run, with the same measures
CREATE TEMP TABLE lang_full AS
  SELECT * FROM gpudl_mine('lang', max_body => 2, min_head_coverage => 0, min_confidence => 0, constants => true);
CREATE TEMP TABLE lang_c1 AS
  SELECT * FROM gpudl_mine('lang', max_body => 2, min_head_coverage => 0, min_confidence => 0, constants => true,
                           max_body_constants => 1);
SELECT (SELECT count(*) FROM lang_full WHERE rule ~ '"' AND rule ~ '\), ') AS full_two_atom_constant_rules,
       (SELECT count(*) FROM lang_c1 WHERE rule ~ '"' AND rule ~ '\), ') AS two_atom_constant_rules;
SELECT (SELECT count(*) FROM (SELECT * FROM lang_c1 EXCEPT SELECT * FROM lang_full) d) AS not_in_full,
       (SELECT count(*) FROM (SELECT * FROM lang_full EXCEPT SELECT * FROM lang_c1) d
         WHERE NOT (rule ~ '"' AND rule ~ '\), ')) AS missing;
-- constants_min_head_coverage apart: the constant rules of support below half
-- of the speaks facts pass head coverage 0, not 0.5 (the variable rules keep 0.5)
SELECT count(*) FILTER (WHERE rule ~ '"') AS constant_rules, count(*) FILTER (WHERE rule !~ '"') AS variable_rules
  FROM gpudl_mine('lang', 'speaks', max_body => 1, min_head_coverage => 0.5, min_confidence => 0,
                  constants => true, constants_min_head_coverage => 0.5);
SELECT count(*) FILTER (WHERE rule ~ '"') AS constant_rules, count(*) FILTER (WHERE rule !~ '"') AS variable_rules
  FROM gpudl_mine('lang', 'speaks', max_body => 1, min_head_coverage => 0.5, min_confidence => 0,
                  constants => true, constants_min_head_coverage => 0);
-- max_seconds: a budget that does not run out mines the same rules; one that
-- has run out before the first level mines none, says so and, committed,
-- leaves the stored rules as they were
SELECT count(*) AS differ FROM (
  (SELECT * FROM lang_full EXCEPT
   SELECT * FROM gpudl_mine('lang', max_body => 2, min_head_coverage => 0, min_confidence => 0, constants => true,
                            max_seconds => 3600))
  UNION ALL
  (SELECT * FROM gpudl_mine('lang', max_body => 2, min_head_coverage => 0, min_confidence => 0, constants => true,
                            max_seconds => 3600) EXCEPT SELECT * FROM lang_full)) d;
SET client_min_messages = notice;
SELECT count(*) AS mined FROM gpudl_mine('lang', 'speaks', max_body => 1, min_head_coverage => 0,
                                         constants => true, commit => true, max_seconds => 1e-300);
RESET client_min_messages;
SELECT count(*) AS stored, bool_and(params->>'timed_out' IS NULL) AS from_the_run_before
  FROM gpudl.mined_rules WHERE program = 'lang' AND target = 'speaks';
SELECT count(*) AS mined FROM gpudl_mine('lang', 'speaks', max_body => 1, min_head_coverage => 0,
                                         min_confidence => 0, constants => true, commit => true, max_seconds => 3600);
SELECT DISTINCT params->>'timed_out' AS timed_out, params->>'complete_body' AS complete_body,
       params->>'complete_body_constants' AS complete_body_constants,
       params->>'max_body_constants' AS max_body_constants
  FROM gpudl.mined_rules WHERE program = 'lang';
DROP TABLE lang_full, lang_c1;
SELECT gpudl_drop_program('lang');
RESET ROLE;

-- errors
SET ROLE mine_owner;
SELECT * FROM gpudl_mine('kin', 'gp', constants => NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM gpudl_mine('nope', 'gp');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM gpudl_mine('kin', 'cousin');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM gpudl_mine('kin', 'old');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM gpudl_mine('kin', 'age');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM gpudl_mine('kin', 'gp', max_body => 4);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM gpudl_mine('kin', 'gp', min_confidence => 1.5);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM gpudl_mine('kin', 'gp', min_head_coverage => -0.1);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM gpudl_mine('kin', 'gp', min_support => 0);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM gpudl_mine('kin', 'gp', max_body => NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM gpudl_mine(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM gpudl_mine('kin', 'gp', constants => true, max_body_constants => 3);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM gpudl_mine('kin', 'gp', constants => true, max_body_constants => 0);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM gpudl_mine('kin', 'gp', constants => true, constants_min_head_coverage => 1.5);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM gpudl_mine('kin', 'gp', max_seconds => 0);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM gpudl_mine('kin', 'gp', max_seconds => 'NaN');
\echo :LAST_ERROR_SQLSTATE
-- a program without a binary relation of one type
SELECT gpudl_create_program('kin_bare', 'p(1).');
SELECT * FROM gpudl_mine('kin_bare');
\echo :LAST_ERROR_SQLSTATE
SELECT gpudl_drop_program('kin_bare');

-- dropping the program drops its mined rules
SELECT count(*) > 0 AS stored FROM gpudl.mined_rules WHERE program = 'kin';
SELECT gpudl_drop_program('kin');
RESET ROLE;
SELECT count(*) AS left_over FROM gpudl.mined_rules WHERE program = 'kin';

DROP SCHEMA mine_s CASCADE;
DROP ROLE mine_user;
DROP ROLE mine_other;
DROP ROLE mine_owner;
