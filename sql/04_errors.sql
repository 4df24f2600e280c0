-- 04_errors: every error class, with its message, detail and hint, and
-- its SQLSTATE (echoed after each error).
CREATE SCHEMA t04;
SET search_path = t04, public;
\set SHOW_CONTEXT never
CREATE TABLE edge(a int, b int);
CREATE TABLE person(name text, age int);
CREATE TABLE weird(p point);
SELECT gpudl_create_program('err');

-- syntax errors (42601): line, column and the text near it
SELECT gpudl_add_rules('err', 'p(X) :- edge(X, Y)');
\echo :LAST_ERROR_SQLSTATE
SELECT gpudl_add_rules('err', 'p(X) :- edge(X, Y.');
\echo :LAST_ERROR_SQLSTATE
SELECT gpudl_add_rules('err', E'p(X) :- edge(X, Y).\nq(X) : - edge(X, _).');
\echo :LAST_ERROR_SQLSTATE
SELECT gpudl_add_rules('err', 'p(X) :- edge(X, "unterminated).');
\echo :LAST_ERROR_SQLSTATE
SELECT gpudl_add_rules('err', 'p(X) :- edge(X, Y). /* unterminated');
\echo :LAST_ERROR_SQLSTATE
SELECT gpudl_add_rules('err', 'p(X) :- edge(X, Y) @ q(Y).');
\echo :LAST_ERROR_SQLSTATE
SELECT gpudl_add_rules('err', 'P(X) :- edge(X, Y).');
\echo :LAST_ERROR_SQLSTATE
SELECT gpudl_add_rules('err', 'p(X) :- edge(X, 99999999999999999999).');
\echo :LAST_ERROR_SQLSTATE
SELECT gpudl_add_rules('err', '.decl q(a: point)');
\echo :LAST_ERROR_SQLSTATE
SELECT gpudl_add_rules('err', 'p(count(X), count(Y)) :- edge(X, Y).');
\echo :LAST_ERROR_SQLSTATE
SELECT gpudl_add_rules('err', 'p(X) :- edge(X, count(Y)).');
\echo :LAST_ERROR_SQLSTATE

-- unknown predicate or table (42P01)
SELECT gpudl_add_rules('err', 'p(X) :- nosuch(X).');
\echo :LAST_ERROR_SQLSTATE
SELECT gpudl_add_rules('err', 'p(X) :- nosuchschema.edge(X, _).');
\echo :LAST_ERROR_SQLSTATE

-- arity and type mismatches (42804)
SELECT gpudl_add_rules('err', 'p(X) :- edge(X).');
\echo :LAST_ERROR_SQLSTATE
SELECT gpudl_add_rules('err', 'p(X) :- edge(X, _). p(X, Y) :- edge(X, Y).');
\echo :LAST_ERROR_SQLSTATE
SELECT gpudl_add_rules('err', 'p(X) :- edge(X, _), person(X, _).');
\echo :LAST_ERROR_SQLSTATE
SELECT gpudl_add_rules('err', 'p(X) :- edge(X, _). p(N) :- person(N, _).');
\echo :LAST_ERROR_SQLSTATE
SELECT gpudl_add_rules('err', 'p(X) :- edge(X, _), X = "text".');
\echo :LAST_ERROR_SQLSTATE
SELECT gpudl_add_rules('err', 'p(N) :- person(N, _), M = N + 1, M > 0.');
\echo :LAST_ERROR_SQLSTATE
SELECT gpudl_add_rules('err', 'p(X) :- weird(X).');
\echo :LAST_ERROR_SQLSTATE
SELECT gpudl_add_rules('err', '.decl q(a: text) q(X) :- edge(X, _).');
\echo :LAST_ERROR_SQLSTATE

-- unsafe rules (42P17)
SELECT gpudl_add_rules('err', 'p(X, Y) :- edge(X, _).');
\echo :LAST_ERROR_SQLSTATE
SELECT gpudl_add_rules('err', 'p(X) :- edge(X, _), !edge(Y, X).');
\echo :LAST_ERROR_SQLSTATE
SELECT gpudl_add_rules('err', 'p(X) :- edge(X, _), Y > 3.');
\echo :LAST_ERROR_SQLSTATE
SELECT gpudl_add_rules('err', 'p(X).');
\echo :LAST_ERROR_SQLSTATE
SELECT gpudl_add_rules('err', 'p(_) :- edge(_, _).');
\echo :LAST_ERROR_SQLSTATE
SELECT gpudl_add_rules('err', 'p(X, N) :- edge(X, _), N = M + 1.');
\echo :LAST_ERROR_SQLSTATE

-- recursion through negation or aggregation (42P17)
SELECT gpudl_add_rules('err', 'win(X) :- edge(X, Y), !win(Y).');
\echo :LAST_ERROR_SQLSTATE
SELECT gpudl_add_rules('err', 'a(X) :- edge(X, _), !b(X). b(X) :- a(X).');
\echo :LAST_ERROR_SQLSTATE
SELECT gpudl_add_rules('err', 'c(X, count(Y)) :- edge(X, Y). c(X, count(Y)) :- c(X, Y).');
\echo :LAST_ERROR_SQLSTATE

-- nothing of the failed calls was written
SELECT count(*) AS rules, (SELECT version FROM gpudl.programs WHERE name = 'err') AS version
FROM gpudl.rules WHERE program = 'err';
-- a failed call inside a transaction leaves the transaction usable after rollback to savepoint
BEGIN;
SAVEPOINT s;
SELECT gpudl_add_rules('err', 'p(X) :- nosuch(X).');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK TO SAVEPOINT s;
SELECT count(*) FROM gpudl_add_rules('err', 'ok(X) :- edge(X, _).');
COMMIT;
SELECT rule FROM gpudl.rules WHERE program = 'err';
