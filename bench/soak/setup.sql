-- bench/soak/setup.sql — the soak database: a random graph and a small
-- family for learning, both owned by soak_owner; soak_other may read them
-- and use gpudl, but does not own the programs.  Run as a superuser.
CREATE EXTENSION gpudl;
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'soak_owner') THEN CREATE ROLE soak_owner LOGIN; END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'soak_other') THEN CREATE ROLE soak_other LOGIN; END IF;
END $$;
GRANT CREATE ON SCHEMA public TO soak_owner;
SET ROLE soak_owner;

-- 400 nodes, 700 random edges (seeded): transitive closure of some 10^4-10^5 pairs
SELECT setseed(0.42);
CREATE TABLE edge(a int, b int);
INSERT INTO edge SELECT DISTINCT (random() * 400)::int, (random() * 400)::int FROM generate_series(1, 700);
SELECT gpudl_create_program('soak', '
  tc(X, Y) :- edge(X, Y).
  tc(X, Z) :- tc(X, Y), edge(Y, Z).
  reach_from_1(Y) :- tc(1, Y).
  deg(X, count(Y)) :- edge(X, Y).
  sink(X) :- edge(_, X), !has_out(X).
  has_out(X) :- edge(X, _).');

-- a family of 8 generations for gpudl_learn (grandparent from parent)
CREATE TABLE parent(p text, c text);
INSERT INTO parent SELECT 'p' || g || '_' || i, 'p' || (g + 1) || '_' || (i * 2 + k)
FROM generate_series(0, 6) g, generate_series(0, 7) i, generate_series(0, 1) k;
CREATE TABLE gp_pos AS SELECT a.p AS a, b.c AS b FROM parent a JOIN parent b ON a.c = b.p;
CREATE TABLE gp_neg AS SELECT a.p AS a, a.c AS b FROM parent a;
SELECT gpudl_create_program('soakfam', 'child(X, Y) :- parent(Y, X).');

-- a rule edit by the owner: add a clause, query with it, remove it
CREATE FUNCTION soak_owner_edit(client int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE rid bigint; n bigint;
BEGIN
  SELECT gpudl_add_rules('soak', format('e%s(X, Y) :- edge(X, Y), X < Y.', client)) INTO rid;
  SELECT gpudl_count('soak', format('e%s(X, Y)', client)) INTO n;
  DELETE FROM gpudl.rules WHERE id = rid;
  RETURN n;
END $$;

-- an edit by a role that does not own the program: once ownership is
-- enforced it is refused with 42501, which is expected and swallowed;
-- any other error propagates (and counts as a failure of the soak)
CREATE FUNCTION soak_other_edit(client int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE rid bigint;
BEGIN
  SELECT gpudl_add_rules('soak', format('o%s(X) :- edge(X, X).', client)) INTO rid;
  DELETE FROM gpudl.rules WHERE id = rid;
  RETURN 'allowed';
EXCEPTION WHEN insufficient_privilege THEN
  RETURN 'refused';
END $$;
GRANT SELECT ON edge, parent, gp_pos, gp_neg TO soak_other;
-- where programs have owners (0.2), soak_other may use 'soak'
DO $$ BEGIN
  IF to_regprocedure('gpudl_grant(text, text, text)') IS NOT NULL THEN
    EXECUTE $q$SELECT gpudl_grant('soak', 'soak_other', 'use')$q$;
    EXECUTE $q$SELECT gpudl_grant('soakfam', 'soak_other', 'use')$q$;
  END IF;
END $$;
RESET ROLE;
