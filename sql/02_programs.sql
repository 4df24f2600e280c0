-- 02_programs: programs and rules as data; validation and versions.
CREATE SCHEMA t02;
SET search_path = t02, public;
CREATE TABLE parent(p text, c text);
INSERT INTO parent VALUES ('abe', 'homer'), ('homer', 'bart'), ('homer', 'lisa');

SELECT gpudl_create_program('family',
  'anc(X, Y) :- parent(X, Y).   % base case
   anc(X, Z) :- anc(X, Y), parent(Y, Z).', 'ancestors');
SELECT name, description, version FROM gpudl.programs;
SELECT program, rule, head, learned, enabled FROM gpudl.rules ORDER BY id;

-- an empty program, rules added later; one row per clause, ids returned
SELECT gpudl_create_program('empty');
SELECT version FROM gpudl.programs WHERE name = 'empty';
SELECT count(*) FROM gpudl_add_rules('empty', 'a(1). a(2). b(X) :- a(X).');
SELECT rule, head FROM gpudl.rules WHERE program = 'empty' ORDER BY id;
SELECT version FROM gpudl.programs WHERE name = 'empty';

-- direct DML on gpudl.rules is validated and bumps the version
INSERT INTO gpudl.rules(program, rule) VALUES ('empty', 'c(X) :- b(X), X > 1.');
SELECT version FROM gpudl.programs WHERE name = 'empty';
SELECT head FROM gpudl.rules WHERE rule LIKE 'c(%';
UPDATE gpudl.rules SET rule = 'c(X) :- b(X), X > 0.' WHERE rule LIKE 'c(%';
SELECT version FROM gpudl.programs WHERE name = 'empty';
DELETE FROM gpudl.rules WHERE rule LIKE 'c(%';
SELECT version FROM gpudl.programs WHERE name = 'empty';
-- a bad row is refused, and nothing changes
INSERT INTO gpudl.rules(program, rule) VALUES ('empty', 'c(X) :- b(X) X > 1.');
INSERT INTO gpudl.rules(program, rule) VALUES ('empty', 'c(X) :- nothing(X).');
INSERT INTO gpudl.rules(program, rule) VALUES ('empty', 'c(X). d(1).');
INSERT INTO gpudl.rules(program, rule) VALUES ('empty', '% only a comment');
UPDATE gpudl.rules SET rule = 'a(X) :- b(X, Y).' WHERE rule = 'a(1).';
-- deleting the rule that defines b leaves b undefined: refused
DELETE FROM gpudl.rules WHERE rule = 'b(X) :- a(X).';
INSERT INTO gpudl.rules(program, rule) VALUES ('nosuch', 'p(1).');
SELECT version, (SELECT count(*) FROM gpudl.rules WHERE program = 'empty') AS rules
FROM gpudl.programs WHERE name = 'empty';
-- disabled rules are not part of the program
UPDATE gpudl.rules SET enabled = false WHERE rule = 'a(2).';
SELECT * FROM gpudl_explain('empty');

-- bindings: a predicate read from a table of another name, or some columns
CREATE TABLE people(id int, name text, mother text, father text);
SELECT gpudl_create_program('bound');
SELECT gpudl_bind('bound', 'mom', 'people', ARRAY['mother', 'name']);
SELECT count(*) FROM gpudl_add_rules('bound', 'm(X, Y) :- mom(X, Y).');
SELECT program, predicate, relation, columns FROM gpudl.bindings;
SELECT version FROM gpudl.programs WHERE name = 'bound';
SELECT * FROM gpudl_explain('bound');
-- re-binding replaces the binding
SELECT gpudl_bind('bound', 'mom', 'parent');
SELECT program, predicate, relation, columns FROM gpudl.bindings;
-- binding errors
SELECT gpudl_bind('bound', 'mom', 'people', ARRAY['mother', 'nope']);
SELECT gpudl_bind('bound', 'mom', 'people');
SELECT gpudl_bind('bound', 'm', 'parent');
SELECT gpudl_bind('nosuch', 'mom', 'parent');
SELECT gpudl_bind('bound', 'mom', 'no_such_table');
SELECT gpudl_bind('bound', NULL, 'parent');
SELECT program, predicate, relation, columns FROM gpudl.bindings;
-- a dropped bound table is reported by name
CREATE TABLE gone(a text, b text);
SELECT gpudl_bind('bound', 'mom', 'gone');
DROP TABLE gone;
SELECT * FROM gpudl_explain('bound');
DELETE FROM gpudl.bindings WHERE program = 'bound';

-- create/add/drop errors change nothing
SELECT gpudl_create_program('family');
SELECT gpudl_create_program(NULL);
SELECT gpudl_create_program('');
SELECT gpudl_create_program('bad', 'p(X) :- q(X');
SELECT count(*) FROM gpudl.programs WHERE name = 'bad';
SELECT gpudl_add_rules('family', '');
SELECT gpudl_add_rules('family', 'x(X) :- parent(X, Y), !anc(X, X).  y(X) :- x(X), !y(X).');
SELECT count(*) FROM gpudl.rules WHERE program = 'family';
SELECT gpudl_add_rules('nosuch', 'p(1).');
SELECT gpudl_drop_program('nosuch');

-- drop takes rules and bindings along
SELECT gpudl_bind('bound', 'mom', 'parent');
SELECT gpudl_drop_program('bound');
SELECT count(*) FROM gpudl.rules WHERE program = 'bound';
SELECT count(*) FROM gpudl.bindings WHERE program = 'bound';
SELECT gpudl_drop_program('empty');
SELECT name FROM gpudl.programs ORDER BY 1;
