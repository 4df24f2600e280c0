-- 03_language: every construct of the language, seen through gpudl_explain
CREATE SCHEMA t03;
SET search_path = t03, public;
-- (strata, rules per stratum, extensional tables and their types).
CREATE TABLE edge(a int, b int);
CREATE TABLE node(n int);
CREATE TABLE person(name text, age bigint, score float8, active bool);
CREATE SCHEMA other;
CREATE TABLE other.link(src int, dst int);

-- facts, rules, linear and non-linear recursion, comments of all three kinds
SELECT gpudl_create_program('lang_rec', $$
  % a comment
  // another comment
  /* a block
     comment */
  e(1, 2). e(2, 3).                       % facts
  path(X, Y) :- edge(X, Y).               % a rule over a table
  path(X, Z) :- path(X, Y), edge(Y, Z).   % linear recursion
  tc(X, Y) :- e(X, Y).
  tc(X, Z) :- tc(X, Y), tc(Y, Z).         % non-linear recursion
$$);
SELECT * FROM gpudl_explain('lang_rec');

-- negation (! and not), comparisons, arithmetic, assignments
SELECT gpudl_create_program('lang_neg', $$
  has_in(Y) :- edge(_, Y).
  only_out(X) :- node(X), !has_in(X).
  isolated(X) :- node(X), not has_in(X), not edge(X, _).
  far(X, Y) :- edge(X, Y), X != Y, Y > 10, X <= 100, Y >= X, X < Y, X = X.
  next(X, N) :- node(X), N = X + 1, N < 100.
  calc(X, V) :- node(X), V = (X * 3 - 1) / 2 % 7, V != -X.
  shifted(X, Y) :- node(X), Y = -X + 10.
$$);
SELECT * FROM gpudl_explain('lang_neg');

-- aggregates in the head: count, sum, min, max
SELECT gpudl_create_program('lang_agg', $$
  deg(X, count(Y)) :- edge(X, Y).
  total(sum(A)) :- person(_, A, _, _).
  youngest(min(A)) :- person(_, A, _, _).
  best(max(S)) :- person(_, _, S, _).
  first_name(min(N)) :- person(N, _, _, _).
  high(X) :- deg(X, D), D > 2.
$$);
SELECT * FROM gpudl_explain('lang_agg');

-- text constants (quoted and lowercase), bool, float, .decl, schema-qualified tables
SELECT gpudl_create_program('lang_const', $$
  .decl score(who: text, points: bigint)
  knows("alice", bob).
  knows(bob, "Carol Smith").
  knows("quote \" and \\ backslash", x).
  score(W, A) :- person(W, A, _, true).
  rich(W) :- person(W, _, S, _), S > 1.5.
  named(W) :- person(W, _, _, _), W = "alice".
  linked(X, Y) :- other.link(X, Y).
  big(N) :- node(N), N > 3000000000.
$$);
SELECT * FROM gpudl_explain('lang_const');
SELECT rule, head FROM gpudl.rules WHERE program = 'lang_const' ORDER BY id;

-- a declared predicate without rules is an empty relation
SELECT gpudl_create_program('lang_decl', $$
  .decl nothing(a: int, b: text).
  some(A) :- nothing(A, _).
$$);
SELECT * FROM gpudl_explain('lang_decl');

-- int and bigint widen to bigint; literals take the column's type
SELECT gpudl_create_program('lang_widen', $$
  mix(X) :- node(X).
  mix(A) :- person(_, A, _, _).
  lit(1).
  lit(X) :- node(X).
$$);
SELECT * FROM gpudl_explain('lang_widen');

-- strata follow dependencies: negation and aggregation read lower strata
SELECT gpudl_create_program('lang_strata', $$
  reach(X, Y) :- edge(X, Y).
  reach(X, Z) :- reach(X, Y), edge(Y, Z).
  unreach(X, Y) :- node(X), node(Y), !reach(X, Y).
  nreach(X, count(Y)) :- unreach(X, Y).
  top(X) :- nreach(X, N), N > 1.
$$);
SELECT * FROM gpudl_explain('lang_strata');

-- a rule symmetric in its head's arguments runs one delta version and adds
-- its rows transposed ("mirror"); X < Y is not symmetric
SELECT gpudl_create_program('lang_sym', $$
  flow(X, Y) :- edge(X, Y).
  flow(X, Y) :- alias(X, Z), edge(Z, Y).
  alias(X, Y) :- flow(Z, X), flow(Z, Y), X != Y.
  up(X, Y) :- edge(X, Y).
  up(X, Y) :- up(Z, X), up(Z, Y), X < Y.
$$);
SELECT * FROM gpudl_explain('lang_sym');
INSERT INTO edge VALUES (1, 2), (1, 3), (2, 4), (3, 4), (4, 5);
SELECT * FROM gpudl_query('lang_sym', 'alias(X, Y)') AS t(x int, y int) ORDER BY 1, 2;
DELETE FROM edge;
SELECT name FROM gpudl.programs WHERE name LIKE 'lang%' ORDER BY 1;
