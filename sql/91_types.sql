-- 91_types: every column type PostgreSQL has (issue 20).  A table with a
-- column of each built-in base type (and a domain, enum, composite, range
-- and array column) is read by a rule under _ and as a value, returned in
-- its own type, bound, loaded, learned over and mined: either right answers
-- or 42804 naming the table, column and type — never a crash.  Then date and
-- time semantics, relations that do not exist (42P01) and a learn run with
-- long arguments.
CREATE SCHEMA t91;
SET search_path = t91, public;
SET client_min_messages = warning;

CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE TYPE pair AS (x int, y text);
CREATE DOMAIN when_tz AS timestamptz;
CREATE DOMAIN spot AS point;
CREATE TABLE ex91(a text);
INSERT INTO ex91 VALUES ('k');

-- every base type that can be a column (no arrays, no pseudo types), and a few others
CREATE TABLE types91 AS
  SELECT t.oid::regtype AS typ, format_type(t.oid, NULL) AS name
  FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
  WHERE n.nspname = 'pg_catalog' AND t.typtype = 'b' AND t.typcategory <> 'A'
    AND t.typisdefined AND t.typname NOT LIKE 'pg\_%' ESCAPE '\'
  UNION ALL SELECT t::regtype, t FROM unnest(ARRAY['t91.mood', 't91.pair', 't91.when_tz', 't91.spot',
                                                 'int4range', 'integer[]', 'text[]', 'int2vector',
                                                 'oidvector', 'pg_lsn']) t;
SELECT count(*) > 60 AS many_types FROM types91;

-- a value of type typ, from candidate literals (NULL when none casts)
CREATE FUNCTION sample91(typ regtype) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  lit text;
  v text;
BEGIN
  FOREACH lit IN ARRAY ARRAY['7', 't', '2020-01-02', '2020-01-02 03:04:05+00', '03:04:05',
      'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '1.5', '10.0.0.1', '08:00:2b:01:02:03', '1 day',
      '(1,2)', '((1,2),(3,4))', '<(1,2),3>', '{1,2,3}', '{"a": 1}', '<a/>', '0/16B3748', 'a & b',
      '101', '\x0102', 'happy', '(1,x)', '[1,5)', '{1,2}', '{a,b}', '(0,1)', '10:20:', '1 2',
      'abc', 'x']
  LOOP
    BEGIN
      EXECUTE format('SELECT (%L::%s)::text', lit, typ) INTO v;
      RETURN lit;
    EXCEPTION WHEN OTHERS THEN
      NULL;
    END;
  END LOOP;
  RETURN NULL;
END $$;

-- the outcome of a statement: 'ok', or its SQLSTATE
CREATE FUNCTION try91(sql text, OUT r text) LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE sql;
  r := 'ok';
EXCEPTION WHEN OTHERS THEN
  r := SQLSTATE;
END $$;

-- one table per type: tt_<n>(a text, v <type>), one row; then every use
CREATE FUNCTION check91(typ regtype, OUT sample boolean, OUT under text, OUT value text,
                        OUT roundtrip text, OUT loaded text, OUT learned text,
                        OUT mined text, OUT bound_query text)
LANGUAGE plpgsql AS $$
DECLARE
  tab text := 'tt_' || substr(md5(typ::text), 1, 8);
  prog text := 'p_' || substr(md5(typ::text), 1, 8);
  lit text := sample91(typ);
  n bigint;
BEGIN
  EXECUTE format('CREATE TABLE %I(a text, v %s)', tab, typ);
  IF lit IS NOT NULL THEN
    EXECUTE format('INSERT INTO %I VALUES (''k'', %L::%s)', tab, lit, typ);
  END IF;
  sample := lit IS NOT NULL;
  PERFORM gpudl_create_program(prog, format('q(A) :- %s(A, _).', tab));
  -- under _: every type
  BEGIN
    EXECUTE format('SELECT count(*) FROM gpudl_query(%L, ''q(A)'') AS t(a text)', prog) INTO n;
    under := n::text;
  EXCEPTION WHEN OTHERS THEN under := SQLSTATE;
  END;
  -- as a value: read, or refused with 42804
  value := try91(format('SELECT gpudl_add_rules(%L, ''r(A, V) :- %s(A, V).'')', prog, tab));
  IF value = 'ok' THEN
    BEGIN
      EXECUTE format('SELECT count(*) FROM gpudl_query(%L, ''r(A, V)'') AS t(a text, v %s) '
                     'WHERE v::text = (SELECT v::text FROM %I)', prog, typ, tab) INTO n;
      roundtrip := n::text;
    EXCEPTION WHEN OTHERS THEN roundtrip := SQLSTATE;
    END;
  END IF;
  -- bound only: loaded, learned over, mined; then read by a rule
  PERFORM gpudl_create_program(prog || 'b');
  PERFORM gpudl_bind(prog || 'b', 'b', tab::regclass);
  loaded := try91(format('SELECT gpudl_load(%L)', tab));
  learned := try91(format('SELECT count(*) FROM gpudl_learn(%L, ''tgt'', ''SELECT a FROM t91.ex91'')', prog || 'b'));
  mined := try91(format('SELECT count(*) FROM gpudl_mine(%L)', prog || 'b'));
  PERFORM gpudl_add_rules(prog || 'b', 'qb(A) :- b(A, _).');
  BEGIN
    EXECUTE format('SELECT count(*) FROM gpudl_query(%L, ''qb(A)'') AS t(a text)', prog || 'b') INTO n;
    bound_query := n::text;
  EXCEPTION WHEN OTHERS THEN bound_query := SQLSTATE;
  END;
  PERFORM gpudl_unload(tab::regclass) FROM gpudl_cache_status() WHERE relation = tab::regclass;
END $$;

SELECT name, c.* FROM types91, LATERAL check91(typ) c ORDER BY name COLLATE "C";

-- the refusal names the table, the column and the type
\set VERBOSITY default
CREATE TABLE geo(a text, p point, i interval);
INSERT INTO geo VALUES ('x', '(1,2)', '1 day');
SELECT gpudl_create_program('geo', 'q(A) :- geo(A, _, _).');
SELECT * FROM gpudl_query('geo', 'q(A)') AS t(a text);
SELECT gpudl_add_rules('geo', 'r(A, P) :- geo(A, P, _).');
SELECT * FROM gpudl_query('geo', 'geo(A, P, _)') AS t(a text, p text);
SELECT count(*) FROM gpudl_query('geo', 'geo(A, _, _)') AS t(a text, p text, i text);
SELECT gpudl_count('geo', 'geo(A, _, _)');
SET client_min_messages = notice;
SELECT gpudl_bind('geo', 'g2', 'geo', ARRAY['a', 'p']);
SELECT count(*) FROM gpudl_mine('geo');
SELECT count(*) FROM gpudl_learn('geo', 'tgt', 'SELECT a FROM ex91');
SET client_min_messages = warning;

-- dates and times keep SQL's order and equality, and come back as themselves
CREATE TABLE ev(who text, at timestamptz, day date, t time, ts timestamp);
INSERT INTO ev VALUES
  ('a', '2020-01-01 10:00+00', '2020-01-01', '10:00', '2020-01-01 10:00'),
  ('b', '2020-01-01 09:00-05', '2020-01-02', '09:00', '2020-01-01 09:00'),
  ('c', '2019-12-31 23:00+00', '2019-12-31', '23:00', '1999-12-31 23:00'),
  ('d', '2020-01-01 14:00+00', '2020-01-01', '14:00', '2020-01-01 14:00');
SELECT gpudl_create_program('ev',
  'later(X, Y) :- ev(X, A, _, _, _), ev(Y, B, _, _, _), A > B.
   sameday(X, Y) :- ev(X, _, D, _, _), ev(Y, _, D, _, _), X < Y.
   at(X, A, D, T, S) :- ev(X, A, D, T, S).
   simul(X, Y) :- ev(X, A, _, _, _), ev(Y, A, _, _, _), X < Y.');
SELECT * FROM gpudl_query('ev', 'later(X, Y)') AS t(x text, y text) ORDER BY 1, 2;
SELECT * FROM gpudl_query('ev', 'sameday(X, Y)') AS t(x text, y text) ORDER BY 1, 2;
SELECT * FROM gpudl_query('ev', 'simul(X, Y)') AS t(x text, y text) ORDER BY 1, 2;
SET TimeZone = 'UTC';
SELECT * FROM gpudl_query('ev', 'at(X, A, D, T, S)') AS t(x text, a timestamptz, d date, t time, s timestamp) ORDER BY 1;
SELECT count(*) FROM gpudl_query('ev', 'at(X, A, D, T, S)') AS t(x text, a timestamptz, d date, t time, s timestamp)
  JOIN ev ON ev.who = x AND ev.at = a AND ev.day = d AND ev.t = t.t AND ev.ts = s;
CREATE TABLE ev_copy(who text, at timestamptz, day date, t time, ts timestamp);
SELECT gpudl_materialize('ev', 'at', 'ev_copy');
SELECT count(*) FROM (SELECT * FROM ev EXCEPT SELECT * FROM ev_copy) d;
-- a bigint that is not a timestamp is refused, not returned
SELECT gpudl_create_program('big', 'n(9223372036854775806).');
SELECT * FROM gpudl_query('big', 'n(X)') AS t(x timestamp);
SELECT * FROM gpudl_query('big', 'n(X)') AS t(x bigint);

-- numeric and uuid: equal values are equal (1.50 = 1.5), text of the same value back
CREATE TABLE num(k text, n numeric, u uuid);
INSERT INTO num VALUES ('a', 1.50, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'), ('b', 1.5, 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'),
  ('c', 2, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12');
SELECT gpudl_create_program('num', 'same(X, Y) :- num(X, N, _), num(Y, N, _), X < Y.
  su(X, Y) :- num(X, _, U), num(Y, _, U), X < Y.  v(X, N, U) :- num(X, N, U).');
SELECT * FROM gpudl_query('num', 'same(X, Y)') AS t(x text, y text);
SELECT * FROM gpudl_query('num', 'su(X, Y)') AS t(x text, y text);
SELECT * FROM gpudl_query('num', 'v(X, N, U)') AS t(x text, n numeric, u uuid) ORDER BY 1;
SELECT * FROM gpudl_query('num', 'v(X, N, U)') AS t(x text, n text, u text) ORDER BY 1;

-- relations that do not exist: 42P01 at bind and load time
SELECT gpudl_bind('geo', 'w', '12345');
SELECT gpudl_load('12345');
SELECT gpudl_load(0);
SELECT try91($$SELECT gpudl_bind('geo', 'w', '12345')$$) AS bind, try91($$SELECT gpudl_load('12345')$$) AS load;
SELECT count(*) FROM gpudl.bindings WHERE program = 'geo';

-- a learn run is recorded whatever the length of its arguments
CREATE TABLE lp(a text, b text);
INSERT INTO lp VALUES ('k', 'm');
SELECT gpudl_create_program('long91', 'base(X) :- lp(X, _).');
SELECT count(*) FROM gpudl_learn('long91', 'tgt', 'SELECT a FROM ex91 WHERE a <> ''' || repeat('y', 6000) || '''',
                                 types => 'tgt(t); ' || repeat('base(t); ', 700));
SELECT status, length(params->>'positives') AS positives, length(params->>'types') AS types
  FROM gpudl.learn_runs WHERE program = 'long91';
RESET client_min_messages;
