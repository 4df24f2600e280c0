-- 81_learn_recursive: gpudl_learn with allow_recursive on the refinement
-- search (issue 22): rules that recurse through their own target, learned
-- from the examples of one family and checked on a second family the
-- learner never saw (the committed program must derive exactly the
-- ancestors there too); a base case comes with every recursive program;
-- without allow_recursive no rule reads the target; predicate invention:
-- grandparent over an invented union of father and mother, committed with
-- the helper's clauses.
SET client_min_messages = warning;
CREATE SCHEMA rec;
-- two families, five and six generations of six people; the parents of a
-- child come from the generation before (even ids fathers, odd mothers)
CREATE TABLE rec.person AS
  SELECT f, g, i, f || '_' || (g * 6 + i) AS name
    FROM generate_series(1, 2) f, generate_series(0, 5) g, generate_series(0, 5) i
   WHERE g < 4 + f;
CREATE TABLE rec.father AS
  SELECT p.name AS parent, c.name AS child FROM rec.person c JOIN rec.person p
      ON p.f = c.f AND p.g = c.g - 1 AND p.i = ((c.i * 5 + c.g + c.f) % 3) * 2;
CREATE TABLE rec.mother AS
  SELECT p.name AS parent, c.name AS child FROM rec.person c JOIN rec.person p
      ON p.f = c.f AND p.g = c.g - 1 AND p.i = ((c.i * 7 + c.g * 3 + c.f) % 3) * 2 + 1;
CREATE VIEW rec.ancestor_truth AS
  WITH RECURSIVE a(x, y) AS (
      SELECT parent, child FROM rec.father UNION SELECT parent, child FROM rec.mother
      UNION
      SELECT a.x, p.child FROM a JOIN (SELECT * FROM rec.father UNION ALL SELECT * FROM rec.mother) p
          ON p.parent = a.y)
  SELECT x, y FROM a;
-- the examples: family 1 only, every pair (ancestors positive, the rest negative)
CREATE TABLE rec.pos AS SELECT x, y FROM rec.ancestor_truth WHERE x LIKE '1\_%';
CREATE TABLE rec.neg AS
  SELECT a.name AS x, b.name AS y FROM rec.person a, rec.person b
   WHERE a.f = 1 AND b.f = 1 AND (a.name, b.name) NOT IN (SELECT x, y FROM rec.pos);
SELECT (SELECT count(*) FROM rec.pos) AS positives, (SELECT count(*) FROM rec.neg) AS negatives;
SELECT gpudl_create_program('rec');
SELECT gpudl_bind('rec', 'father', 'rec.father');
SELECT gpudl_bind('rec', 'mother', 'rec.mother');

-- without recursion: no rule reads ancestor, and the examples are not fitted
SELECT count(*) AS rules, bool_and(rule NOT LIKE '%:-%ancestor%') AS none_recursive,
       min(recall) < 1 OR sum(support) < (SELECT count(*) FROM rec.pos) AS not_exact
  FROM gpudl_learn('rec', 'ancestor', 'SELECT * FROM rec.pos', 'SELECT * FROM rec.neg',
                   max_body => 2, max_vars => 3, method => 'refine');

-- with recursion: a base case and a recursive rule, exact on the examples
CREATE TEMP TABLE learned AS
  SELECT * FROM gpudl_learn('rec', 'ancestor', 'SELECT * FROM rec.pos', 'SELECT * FROM rec.neg',
                            max_body => 2, max_vars => 3, method => 'refine',
                            allow_recursive => true, commit => true);
SELECT count(*) <= 4 AS small, bool_or(rule LIKE '%:-%ancestor(%') AS some_recursive,
       bool_or(rule NOT LIKE '%:-%ancestor(%') AS some_base, bool_and("precision" = 1) AS consistent
  FROM learned;
SELECT status, message ~ '^refinement search .* precision 1\.000, recall 1\.000' AS exact
  FROM gpudl.learn_runs ORDER BY id DESC LIMIT 1;
-- the committed program on both families equals the truth: the second family was never seen
SELECT count(*) AS derived,
       (SELECT count(*) FROM rec.ancestor_truth) AS truth,
       count(*) FILTER (WHERE (x, y) NOT IN (SELECT x, y FROM rec.ancestor_truth)) AS wrong
  FROM gpudl_query('rec', 'ancestor(X, Y)') AS t(x text, y text);
SELECT count(*) AS missed FROM rec.ancestor_truth
 WHERE (x, y) NOT IN (SELECT * FROM gpudl_query('rec', 'ancestor(X, Y)') AS t(x text, y text));
SELECT count(*) AS unseen_family FROM gpudl_query('rec', 'ancestor(X, Y)') AS t(x text, y text)
 WHERE x LIKE '2\_%';
SELECT gpudl_drop_program('rec');

-- names as a knowledge graph spells them: the learned recursive program
-- quotes them, and the committed program parses and derives the same
SELECT gpudl_create_program('rec/names');
SELECT gpudl_bind('rec/names', '/people/person/father', 'rec.father');
SELECT gpudl_bind('rec/names', '/people/person/mother', 'rec.mother');
SELECT rank, rule FROM gpudl_learn('rec/names', '/people/person/ancestor-of', 'SELECT * FROM rec.pos',
                                   'SELECT * FROM rec.neg', max_body => 2, max_vars => 3,
                                   method => 'refine', allow_recursive => true, commit => true)
 ORDER BY rank;
SELECT count(*) AS derived,
       count(*) FILTER (WHERE (x, y) NOT IN (SELECT x, y FROM rec.ancestor_truth)) AS wrong
  FROM gpudl_query('rec/names', '"/people/person/ancestor-of"(X, Y)') AS t(x text, y text);
SELECT gpudl_drop_program('rec/names');

-- predicate invention: grandparent is one rule over a helper, the union of
-- the two parent relations (its clauses come with the rule, are committed
-- first, and are named from the relations' last path segments)
CREATE VIEW rec.grandparent_truth AS
  WITH p AS (SELECT * FROM rec.father UNION SELECT * FROM rec.mother)
  SELECT DISTINCT a.parent AS x, b.child AS y FROM p a JOIN p b ON b.parent = a.child;
CREATE TABLE rec.gpos AS SELECT x, y FROM rec.grandparent_truth WHERE x LIKE '1\_%';
CREATE TABLE rec.gneg AS
  SELECT a.name AS x, b.name AS y FROM rec.person a, rec.person b
   WHERE a.f = 1 AND b.f = 1 AND (a.name, b.name) NOT IN (SELECT x, y FROM rec.gpos);
SELECT gpudl_create_program('rec/pi');
SELECT gpudl_bind('rec/pi', '/people/person/father', 'rec.father');
SELECT gpudl_bind('rec/pi', '/people/person/mother', 'rec.mother');
SELECT rank, rule, "precision", recall FROM gpudl_learn('rec/pi', 'grandparent', 'SELECT * FROM rec.gpos',
                                   'SELECT * FROM rec.gneg', max_body => 2, max_vars => 3,
                                   method => 'refine', allow_recursive => true, commit => true)
 ORDER BY rank;
SELECT count(*) AS derived,
       (SELECT count(*) FROM rec.grandparent_truth) AS truth,
       count(*) FILTER (WHERE (x, y) NOT IN (SELECT x, y FROM rec.grandparent_truth)) AS wrong
  FROM gpudl_query('rec/pi', 'grandparent(X, Y)') AS t(x text, y text);
SELECT gpudl_drop_program('rec/pi');
DROP SCHEMA rec CASCADE;
