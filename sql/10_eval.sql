-- 10_eval: answers back in SQL — gpudl_query, gpudl_count, gpudl_materialize —
-- goals with constants, types, max_iterations, privileges and counters.
CREATE SCHEMA t10;
SET search_path = t10, public;
CREATE TABLE parent(p text, c text);
INSERT INTO parent VALUES ('abe', 'homer'), ('mona', 'homer'), ('homer', 'bart'),
  ('homer', 'lisa'), ('marge', 'bart'), ('marge', 'lisa'), ('lisa', 'zia');
SELECT gpudl_create_program('fam10', $$
  anc(X, Y) :- parent(X, Y).
  anc(X, Z) :- anc(X, Y), parent(Y, Z).
  root(X) :- parent(X, _), !parent(_, X).
  kids(X, count(Y)) :- parent(X, Y).
  gen(X, 0) :- root(X).
  gen(Y, N) :- gen(X, M), parent(X, Y), N = M + 1.
  .decl label(who: text, tag: text)
  label(X, "ancestor of lisa") :- anc(X, lisa).
$$);

-- rows, typed by the column definition list
SELECT * FROM gpudl_query('fam10', 'anc(X, Y)') AS t(a text, b text) ORDER BY 1, 2;
-- constants in the goal filter (quoted or lowercase); _ and repeated variables
SELECT * FROM gpudl_query('fam10', 'anc("abe", Y)') AS t(a text, b text) ORDER BY 2;
SELECT * FROM gpudl_query('fam10', 'anc(X, lisa)') AS t(a text, b text) ORDER BY 1;
SELECT * FROM gpudl_query('fam10', 'anc(X, X)') AS t(a text, b text);
SELECT * FROM gpudl_query('fam10', 'root(X)') AS t(a text) ORDER BY 1;
SELECT * FROM gpudl_query('fam10', 'kids(X, N)') AS t(a text, n bigint) ORDER BY 1;
SELECT * FROM gpudl_query('fam10', 'gen(X, N)') AS t(a text, n bigint) ORDER BY 2, 1;
SELECT * FROM gpudl_query('fam10', 'label(X, T)') AS t(a text, tag text) ORDER BY 1;
-- a goal on a table predicate reads the table
SELECT count(*) FROM gpudl_query('fam10', 'parent(X, Y)') AS t(a text, b text);
-- a constant that occurs nowhere gives no rows
SELECT count(*) FROM gpudl_query('fam10', 'anc(nobody, Y)') AS t(a text, b text);
-- varchar and int8 columns are accepted where text and int are inferred
SELECT * FROM gpudl_query('fam10', 'gen(X, 3)') AS t(a varchar, n numeric);

-- counting in the engine
SELECT gpudl_count('fam10', 'anc(X, Y)');
SELECT gpudl_count('fam10', 'anc(X, "bart")');
SELECT gpudl_count('fam10', 'root(_)');

-- materialize: create the table with inferred types (decl names columns), replace, append
SELECT gpudl_materialize('fam10', 'anc', 'anc_table');
SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
WHERE attrelid = 't10.anc_table'::regclass AND attnum > 0 ORDER BY attnum;
SELECT count(*) FROM anc_table;
SELECT gpudl_materialize('fam10', 'label', 'labels');
SELECT * FROM labels ORDER BY 1;
SELECT gpudl_materialize('fam10', 'anc', 'anc_table', 'append');
SELECT count(*) FROM anc_table;
SELECT gpudl_materialize('fam10', 'anc', 'anc_table', 'replace');
SELECT count(*) FROM anc_table;
-- into an existing table with an index (the executor path)
CREATE TABLE gens(who text, n bigint, PRIMARY KEY (who, n));
SELECT gpudl_materialize('fam10', 'gen', 'gens');
SELECT * FROM gens ORDER BY 2, 1;
-- a failed materialize writes nothing
CREATE TABLE first_gen(who text PRIMARY KEY, n bigint);
SELECT gpudl_materialize('fam10', 'gen', 'first_gen');
SELECT count(*) FROM first_gen;

-- errors: the column definition list, goals, modes
SELECT * FROM gpudl_query('fam10', 'anc(X, Y)') AS t(a text);
SELECT * FROM gpudl_query('fam10', 'anc(X, Y)') AS t(a int, b text);
SELECT * FROM gpudl_query('fam10', 'anc(X)') AS t(a text);
SELECT * FROM gpudl_query('fam10', 'nope(X)') AS t(a text);
SELECT * FROM gpudl_query('fam10', 'anc(1, Y)') AS t(a text, b text);
SELECT * FROM gpudl_query('fam10', 'anc(X, Y) :- parent(X, Y)') AS t(a text, b text);
SELECT * FROM gpudl_query('fam10', 'anc(X, Y') AS t(a text, b text);
SELECT * FROM gpudl_query('nosuch', 'anc(X, Y)') AS t(a text, b text);
SELECT gpudl_count('fam10', NULL);
SELECT gpudl_materialize('fam10', 'anc', 'anc_table', 'upsert');
SELECT gpudl_materialize('fam10', 'nope', 'x');
SELECT gpudl_materialize('fam10', 'anc', 'gens');

-- a run that derives without bound stops at gpudl.max_iterations
SELECT gpudl_create_program('count_up', 'n(0). n(Y) :- n(X), Y = X + 1.');
SET gpudl.max_iterations = 50;
SELECT gpudl_count('count_up', 'n(X)');
RESET gpudl.max_iterations;
SELECT gpudl_create_program('bounded', 'n(0). n(Y) :- n(X), Y = X + 1, Y <= 500.');
SELECT gpudl_count('bounded', 'n(X)');
-- an evaluation past gpudl.host_memory_limit stops with an error, not the OOM killer
CREATE TABLE chain AS SELECT g AS a, g + 1 AS b FROM generate_series(1, 1000) g;
SELECT gpudl_create_program('chain_tc', 'p(X, Y) :- chain(X, Y). p(X, Z) :- p(X, Y), chain(Y, Z).');
SET gpudl.host_memory_limit = '1MB';
SET gpudl.device = cpu;  -- (on a GPU the relations live in device memory)
SELECT gpudl_count('chain_tc', 'p(X, Y)');
RESET gpudl.host_memory_limit;
RESET gpudl.device;
SELECT gpudl_count('chain_tc', 'p(X, Y)');
-- division by zero is an error, not a crash
SELECT gpudl_create_program('divzero', 'd(X, Y) :- n(X), Y = 10 / X. n(0). n(1).');
SELECT gpudl_count('divzero', 'd(X, Y)');
SELECT gpudl_create_program('divguard', 'd(X, Y) :- n(X), X != 0, Y = 10 / X. n(0). n(2).');
SELECT * FROM gpudl_query('divguard', 'd(X, Y)') AS t(x int, y bigint);

-- rules never read what the caller cannot
CREATE ROLE gpudl_reader;
GRANT USAGE ON SCHEMA t10 TO gpudl_reader;
CREATE TABLE secret(p text, c text);
INSERT INTO secret VALUES ('x', 'y');
SELECT gpudl_create_program('spy', 'leak(X, Y) :- secret(X, Y).');
-- (the reader may use the program: what it reads is checked apart)
SELECT gpudl_grant('spy', 'gpudl_reader', 'use');
SET ROLE gpudl_reader;
SELECT gpudl_count('spy', 'leak(X, Y)');
SELECT * FROM gpudl_query('spy', 'leak(X, Y)') AS t(a text, b text);
RESET ROLE;
GRANT SELECT ON secret TO gpudl_reader;
SET ROLE gpudl_reader;
SELECT gpudl_count('spy', 'leak(X, Y)');
RESET ROLE;
-- row-level security applies too
ALTER TABLE secret ENABLE ROW LEVEL SECURITY;
CREATE POLICY only_x ON secret FOR SELECT USING (p = 'z');
SET ROLE gpudl_reader;
SELECT gpudl_count('spy', 'leak(X, Y)');
RESET ROLE;
DROP TABLE secret;
SELECT gpudl_drop_program('spy');
REVOKE ALL ON SCHEMA t10 FROM gpudl_reader;
DROP ROLE gpudl_reader;

-- counters of this backend
SELECT name FROM gpudl_stats() ORDER BY 1;
SELECT value > 0 AS positive FROM gpudl_stats() WHERE name IN ('runs', 'rows_loaded') ORDER BY name;
-- the plain function (no custom scan) called again for each outer row
SET gpudl.enable_customscan = off;
SELECT p.p, t.b FROM (VALUES ('abe'), ('marge'), ('zia')) p(p),
  LATERAL gpudl_query('fam10', 'anc(' || p.p || ', Y)') AS t(a text, b text) ORDER BY 1, 2;
RESET gpudl.enable_customscan;
-- failed calls leak no backend memory: after a warm-up, a thousand more
-- failing runs in the same session leave its memory contexts as they were
SET gpudl.max_iterations = 50;
CREATE FUNCTION pg_temp.fail_many(n int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1..n LOOP
    BEGIN PERFORM gpudl_count('count_up', 'n(X)'); EXCEPTION WHEN program_limit_exceeded THEN NULL; END;
    BEGIN PERFORM gpudl_count('divzero', 'd(X, Y)'); EXCEPTION WHEN division_by_zero THEN NULL; END;
  END LOOP;
END $$;
SELECT pg_temp.fail_many(200);
CREATE TEMP TABLE mem0 AS SELECT sum(total_bytes) AS b FROM pg_backend_memory_contexts;
SELECT pg_temp.fail_many(200);
CREATE TEMP TABLE mem1 AS SELECT sum(total_bytes) AS b FROM pg_backend_memory_contexts;
SELECT pg_temp.fail_many(1000);
SELECT (SELECT sum(total_bytes) FROM pg_backend_memory_contexts) - mem1.b < 16 * 1024 AS no_leak
FROM mem1;
RESET gpudl.max_iterations;

-- worker threads (gpudl.threads): the same answer with one thread and with
-- four on joins big enough to be split; out of range is refused
CREATE TABLE tree10(a int, b int);
INSERT INTO tree10 SELECT i, 2 * i + k FROM generate_series(1, 65535) i, generate_series(0, 1) k;
SELECT gpudl_create_program('tree10', 'below(X, Y) :- tree10(X, Y). below(X, Z) :- below(X, Y), tree10(Y, Z).');
SET gpudl.threads = 1;
SELECT gpudl_count('tree10', 'below(X, Y)');
SET gpudl.threads = 4;
SELECT gpudl_count('tree10', 'below(X, Y)');
SHOW gpudl.threads;
SET gpudl.threads = 65;
SET gpudl.threads = -1;
RESET gpudl.threads;

-- slices (gpudl.batch_rows): the same answer with every join cut into
-- slices of 64 rows (many slices), and with no bound (none); below 0 is
-- refused
SET gpudl.batch_rows = 64;
SELECT gpudl_count('tree10', 'below(X, Y)');
SELECT value > 100 AS sliced FROM gpudl_stats() WHERE name = 'last_batches';
SET gpudl.batch_rows = 0;
SELECT gpudl_count('tree10', 'below(X, Y)');
SELECT value AS slices FROM gpudl_stats() WHERE name = 'last_batches';
SET gpudl.batch_rows = -1;
RESET gpudl.batch_rows;
SHOW gpudl.batch_rows;
