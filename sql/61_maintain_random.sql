-- 61_maintain_random: differential test of maintained targets (issue 24).
-- Random base tables under random sequences of inserts, deletes, updates,
-- truncates, rolled-back changes and a rule edit, for programs with linear,
-- non-linear and mutual recursion, negation, aggregates, comparisons and
-- constants.  After every step the maintained table must equal what
-- gpudl_query derives from the tables as they are (a full recomputation);
-- any difference stops the test with the program, seed and step.
SET client_min_messages = warning;
CREATE TABLE e1(a int, b int);
CREATE TABLE e2(a int, b int);
CREATE TABLE mr_log(share float8, checked text, family text, mode text, checks int);

CREATE FUNCTION mr_check(prog text, tgt regclass, what text, goal text DEFAULT 'p(X, Y)') RETURNS void AS $$
DECLARE coldefs text; diff bigint;
BEGIN
  SELECT string_agg(quote_ident(attname) || ' ' || format_type(atttypid, atttypmod), ', ' ORDER BY attnum)
    INTO coldefs FROM pg_attribute WHERE attrelid = tgt AND attnum > 0 AND NOT attisdropped;
  EXECUTE format('SELECT count(*) FROM ((TABLE %s EXCEPT ALL SELECT * FROM gpudl_query(%L, %L) AS t(%s)) '
                 'UNION ALL (SELECT * FROM gpudl_query(%L, %L) AS t(%s) EXCEPT ALL TABLE %s)) d',
                 tgt, prog, goal, coldefs, prog, goal, coldefs, tgt) INTO diff;
  IF diff <> 0 THEN
    RAISE EXCEPTION 'maintained % differs from the derived relation by % rows after %', tgt, diff, what;
  END IF;
END $$ LANGUAGE plpgsql;

-- one random step on a random base table
CREATE FUNCTION mr_step(step int) RETURNS text AS $$
DECLARE t text := CASE WHEN random() < 0.6 THEN 'e1' ELSE 'e2' END; r float8 := random(); k int := 1 + (random() * 6)::int;
BEGIN
  IF r < 0.35 THEN
    EXECUTE format('INSERT INTO %I SELECT (random() * 7)::int, (random() * 7)::int FROM generate_series(1, %s)', t, k);
    RETURN format('insert %s into %s', k, t);
  ELSIF r < 0.65 THEN
    EXECUTE format('DELETE FROM %I WHERE ctid IN (SELECT ctid FROM %I ORDER BY random() LIMIT %s)', t, t, k);
    RETURN format('delete %s from %s', k, t);
  ELSIF r < 0.8 THEN
    EXECUTE format('UPDATE %I SET b = (random() * 7)::int WHERE random() < 0.3', t);
    RETURN format('update %s', t);
  ELSIF r < 0.85 THEN
    EXECUTE format('TRUNCATE %I', t);
    RETURN format('truncate %s', t);
  ELSE
    BEGIN
      EXECUTE format('INSERT INTO %I SELECT (random() * 7)::int, (random() * 7)::int FROM generate_series(1, 5)', t);
      EXECUTE format('DELETE FROM %I WHERE a = 1', t);
      RAISE EXCEPTION 'roll back';
    EXCEPTION WHEN raise_exception THEN
      NULL;
    END;
    RETURN format('rolled back change of %s', t);
  END IF;
END $$ LANGUAGE plpgsql;

-- one setting's run over every family, its own transaction (temporary tables pile up)
CREATE FUNCTION mr_run(setting text) RETURNS void AS $$
DECLARE
  programs text[] := ARRAY[
    'linear|p(X, Y) :- e1(X, Y).  p(X, Z) :- p(X, Y), e1(Y, Z).',
    'nonlinear|p(X, Y) :- e1(X, Y).  p(X, Z) :- p(X, Y), p(Y, Z).',
    'nonlinear-join|p(X, Y) :- e1(X, Y).  p(X, Z) :- p(X, Y), p(Y, Z), e2(Y, _).',
    'same-generation|p(X, Y) :- e1(P, X), e1(P, Y), X != Y.  p(X, Y) :- e1(A, X), p(A, B), e1(B, Y).',
    'two-tables|p(X, Y) :- e1(X, Y).  p(X, Y) :- e2(X, Y).  p(X, Z) :- p(X, Y), e2(Y, Z), Y < 5.',
    'constants|p(X, Y) :- e1(X, Y), X = 3.  p(3, Y) :- e2(Y, 3).  p(X, Z) :- p(X, Y), e1(Y, Z), e2(Z, _).  p(0, 0).',
    'arithmetic|p(X, Y) :- e1(X, Y), X + Y < 9.  p(X, Z) :- p(X, Y), e2(Y, Z), Z >= X - 2.',
    'mutual|q(X, Y) :- e1(X, Y).  q(X, Y) :- r(X, Z), e2(Z, Y).  r(X, Y) :- q(X, Y), X <= Y.  p(X, Y) :- q(X, Y), r(Y, X).',
    'negation|p(X, Y) :- e1(X, Y), !e2(X, Y).',
    'negated-recursion|p(X, Y) :- e1(X, Y), !e2(X, Y).  p(X, Z) :- p(X, Y), p(Y, Z), !e2(Y, _).',
    'unfolded|v(X, Y) :- e1(X, Y), X != Y.  v(X, 3) :- e2(X, _), !e1(X, X).  p(X, Y) :- v(X, Y).  p(X, Z) :- p(X, Y), v(Y, Z).',
    'through-target|p(X, Y) :- e1(X, Y).  p(X, Z) :- o(X, Y), e2(Y, Z).  o(X, Y) :- p(X, Y), e1(Y, _), !e2(X, X).',
    'negated-closure|c(X, Y) :- e1(X, Y).  c(X, Z) :- c(X, Y), e1(Y, Z).  p(X, Y) :- e2(X, Y), !c(X, Y).',
    'negated-closure-held|c(X, Y) :- e1(X, Y).  c(X, Z) :- c(X, Y), e1(Y, Z).  p(X, Y) :- e2(X, Y), !c(X, Y).||c',
    'closure-reader-held|c(X, Y) :- e1(X, Y).  c(X, Z) :- c(X, Y), c(Y, Z).  p(X, Z) :- c(X, Y), e2(Y, Z), !c(Z, X).||c',
    'mutual-held|q(X, Y) :- e1(X, Y).  q(X, Y) :- r(X, Z), e2(Z, Y).  r(X, Y) :- q(X, Y), X <= Y.  p(X, Y) :- q(X, Y), r(Y, X).||q',
    'sum-join|p(X, sum(Z)) :- e1(X, Y), e2(Y, Z), !e2(X, X).|UPDATE gpudl.rules SET rule = ''p(X, sum(Y)) :- e2(X, Y), e1(Y, _).'' WHERE program = ''mr''',
    'min-first|p(min(X), Y) :- e1(X, Y), e2(Y, _).|UPDATE gpudl.rules SET rule = ''p(min(X), Y) :- e2(X, Y).'' WHERE program = ''mr''',
    'max-compare|p(X, max(Y)) :- e1(X, Y), e2(X, Z), Y < Z.|UPDATE gpudl.rules SET rule = ''p(X, max(Y)) :- e1(Y, X).'' WHERE program = ''mr''',
    'aggregate-view|v(X, Y) :- e1(X, Y).  v(X, Y) :- e2(Y, X).  p(X, count(Y)) :- v(X, Y).|UPDATE gpudl.rules SET rule = ''v(X, Y) :- e1(Y, X).'' WHERE program = ''mr'' AND rule LIKE ''v(X, Y) :- e2%''',
    'aggregate-view-held|v(X, Y) :- e1(X, Y).  v(X, Y) :- e2(Y, X).  v(X, Z) :- v(X, Y), e1(Y, Z).  p(X, count(Y)) :- v(X, Y).|UPDATE gpudl.rules SET rule = ''v(X, Y) :- e1(Y, X).'' WHERE program = ''mr'' AND rule LIKE ''v(X, Y) :- e2%''|v',
    'aggregate|p(X, count(Y)) :- e1(X, Y).|UPDATE gpudl.rules SET rule = ''p(X, count(Y)) :- e2(X, Y).'' WHERE program = ''mr'''
  ];
  entry text; family text; rules text; edit text; held text; seed int; step int; what text; mode text; checks int;
  share float8; checked text;
BEGIN
  share := split_part(setting, '|', 1)::float8;
  checked := split_part(setting, '|', 2);
  PERFORM set_config('gpudl.maintain_recompute_share', share::text, false);
  PERFORM set_config('gpudl.maintain_check_deletions', checked, false);
  FOREACH entry IN ARRAY programs LOOP
    family := split_part(entry, '|', 1);
    rules := split_part(entry, '|', 2);
    edit := coalesce(nullif(split_part(entry, '|', 3), ''),
                     'SELECT gpudl_add_rules(''mr'', ''p(X, X) :- e2(X, X).'')');
    held := nullif(split_part(entry, '|', 4), '');
    checks := 0;
    FOR seed IN 1..3 LOOP
      PERFORM setseed(seed / 10.0 + length(family) / 1000.0);
      TRUNCATE e1, e2;
      INSERT INTO e1 SELECT (random() * 7)::int, (random() * 7)::int FROM generate_series(1, 8);
      INSERT INTO e2 SELECT (random() * 7)::int, (random() * 7)::int FROM generate_series(1, 6);
      PERFORM gpudl_create_program('mr', rules);
      IF held IS NOT NULL THEN
        -- another maintained table holds a predicate p reads: p reads that table
        PERFORM gpudl_materialize('mr', held, 'mr_held', mode => 'maintain');
      END IF;
      PERFORM gpudl_materialize('mr', 'p', 'mr_target', mode => 'maintain');
      PERFORM mr_check('mr', 'mr_target', 'setting up');
      FOR step IN 1..14 LOOP
        what := mr_step(step);
        PERFORM mr_check('mr', 'mr_target', format('%s (%s, seed %s, step %s, share %s, checked %s)', what, family, seed, step, share, checked));
        IF held IS NOT NULL THEN
          PERFORM mr_check('mr', 'mr_held', format('%s (%s held, seed %s, step %s)', what, family, seed, step),
                           held || '(X, Y)');
        END IF;
        checks := checks + 1;
        IF step = 9 THEN
          -- a rule edit recomputes, and later changes go on from there
          EXECUTE edit;
          PERFORM mr_check('mr', 'mr_target', format('rule edit (%s, seed %s)', family, seed));
        END IF;
      END LOOP;
      SELECT m.mode INTO mode FROM gpudl.maintained m WHERE target = 'mr_target'::regclass;
      DROP TABLE mr_target;
      DROP TABLE IF EXISTS mr_held;
      PERFORM gpudl_drop_program('mr');
    END LOOP;
    INSERT INTO mr_log VALUES (share, checked, family, mode, checks);
  END LOOP;
END $$ LANGUAGE plpgsql;

-- the default; 0: every change that reaches a row stops its rounds and
-- recomputes; 1 with every over-deletion checked against the fresh relation
SELECT mr_run('0.01|auto');
SELECT mr_run('0|auto');
SELECT mr_run('1|always');
RESET gpudl.maintain_recompute_share;
RESET gpudl.maintain_check_deletions;
RESET client_min_messages;

-- every family ran its 42 checks at each setting; mode says how changes were applied
SELECT share, checked, family, mode, checks FROM mr_log ORDER BY share DESC, checked, family;
SELECT count(*) AS maintained_left, (SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'gpudl_maintain%') AS triggers_left
  FROM gpudl.maintained;

DROP FUNCTION mr_run(text);
DROP FUNCTION mr_step(int);
DROP FUNCTION mr_check(text, regclass, text, text);
DROP TABLE e1, e2, mr_log;
