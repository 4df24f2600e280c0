-- tools/demo.sql — the sample session of tools/demo.sh.
\set QUIET on
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
  ('selma', 'ling');

\echo '== a program: ancestors'
SELECT gpudl_create_program('family',
  'anc(X, Y) :- parent(X, Y).
   anc(X, Z) :- anc(X, Y), parent(Y, Z).',
  'ancestors over the parent table');
SELECT * FROM gpudl_explain('family');
