-- tools/demo.sql — the sample session of tools/demo.sh.
\set QUIET on
\pset footer off
\pset footer off
DROP EXTENSION IF EXISTS gpudl CASCADE;
DROP TABLE IF EXISTS parent, gp_examples;
CREATE EXTENSION gpudl;

-- a small family tree
CREATE TABLE parent(p text, c text);
INSERT INTO parent VALUES
  ('abe', 'homer'), ('mona', 'homer'), ('homer', 'bart'), ('homer', 'lisa'),
  ('homer', 'maggie'), ('marge', 'bart'), ('marge', 'lisa'), ('marge', 'maggie'),
  ('clancy', 'marge'), ('jackie', 'marge'), ('clancy', 'patty'), ('clancy', 'selma'),
  ('selma', 'ling'), ('bart', 'bo');

\echo '== a program: ancestors'
SELECT gpudl_create_program('family',
  'anc(X, Y) :- parent(X, Y).
   anc(X, Z) :- anc(X, Y), parent(Y, Z).',
  'ancestors over the parent table');
SELECT * FROM gpudl_explain('family');

\echo '== every ancestor, through gpudl_query'
SELECT * FROM gpudl_query('family', 'anc(X, Y)') AS t(ancestor text, descendant text)
ORDER BY 1, 2 LIMIT 8;
\echo '== ancestors of bart, counted in the engine'
SELECT gpudl_count('family', 'anc(X, bart)') AS ancestors_of_bart;

\echo '== learning grandparent from examples'
CREATE TABLE gp_examples AS
  SELECT DISTINCT a.p AS grandparent, b.c AS grandchild FROM parent a JOIN parent b ON a.c = b.p;
SELECT rank, rule, round(probability::numeric, 3) AS probability, precision, recall
FROM gpudl_learn('family', 'grandparent', 'SELECT * FROM gp_examples', commit => true);
\echo '== the learned rule is now part of the program'
SELECT * FROM gpudl_query('family', 'grandparent(X, Y)') AS t(grandparent text, grandchild text) ORDER BY 1, 2;
SELECT id, target, status, epochs, round(final_loss::numeric, 4) AS final_loss FROM gpudl.learn_runs;
SELECT * FROM gpudl_device_info();
