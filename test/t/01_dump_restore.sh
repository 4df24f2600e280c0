#!/usr/bin/env bash
# 01_dump_restore: pg_dump keeps programs, rules, bindings and learning
# history, with their owners and grants; a restored database has the same
# catalog rows and the programs still analyse.  Roles are global objects
# (pg_dumpall -g): they are dropped and made again, with new OIDs, before the
# restore, which must map owners and grants back by name.
source "$(dirname "$0")/../../tools/pgenv.sh"
set -e
export PGOPTIONS="-c client_min_messages=warning"
src=gpudl_dump_src; dst=gpudl_dump_dst
dropdb --if-exists $src; dropdb --if-exists $dst
roles="CREATE ROLE dump_alice; CREATE ROLE dump_bob;"
psql -X -q -d postgres -c "DROP ROLE IF EXISTS dump_alice" -c "DROP ROLE IF EXISTS dump_bob" -c "$roles"
createdb $src; createdb $dst
psql -X -q -v ON_ERROR_STOP=1 -d $src <<'SQL' >/dev/null
CREATE EXTENSION gpudl;
CREATE TABLE parent(p text, c text);
CREATE TABLE people(name text, mother text);
INSERT INTO parent VALUES ('a', 'b'), ('b', 'c');
SELECT gpudl_create_program('family', 'anc(X, Y) :- parent(X, Y). anc(X, Z) :- anc(X, Y), parent(Y, Z).', 'ancestors');
SELECT gpudl_create_program('moms');
SELECT gpudl_bind('moms', 'mom', 'people', ARRAY['mother', 'name']);
SELECT gpudl_add_rules('moms', 'm(X, Y) :- mom(X, Y).');
INSERT INTO gpudl.learn_runs(program, target, status, params) VALUES ('family', 'anc', 'succeeded', '{"epochs": 1}');
INSERT INTO gpudl.learned_rules(run_id, rank, rule, probability) SELECT id, 1, 'anc(X, Y) :- parent(X, Y).', 0.9 FROM gpudl.learn_runs;
-- owners and grants
UPDATE gpudl.programs SET owner = 'dump_alice' WHERE name = 'moms';
SELECT gpudl_grant('family', 'dump_bob', 'use');
SELECT gpudl_grant('moms', 'dump_bob', 'modify');
SELECT gpudl_grant('moms', 'public', 'use');
GRANT SELECT ON parent TO dump_bob;
INSERT INTO gpudl.learn_runs(program, target, status, run_by) VALUES ('family', 'anc', 'failed', 'dump_bob');
-- a maintained table (0.7)
SELECT gpudl_materialize('family', 'anc', 'anc_kept', mode => 'maintain');
-- and one that reads it (the negated closure comes from anc_kept)
SELECT gpudl_add_rules('family', 'unrelated(X, Y) :- parent(X, _), parent(Y, _), X != Y, !anc(X, Y).');
SELECT gpudl_materialize('family', 'unrelated', 'unrelated_kept', mode => 'maintain');
INSERT INTO parent VALUES ('c', 'd');
SQL
pg_dump -d $src >/tmp/gpudl_dump.sql
q="SELECT p.name, p.description, r.id, r.rule, r.head, r.learned, r.enabled FROM gpudl.programs p JOIN gpudl.rules r ON r.program = p.name ORDER BY r.id;
   SELECT program, predicate, relation::text, columns FROM gpudl.bindings;
   SELECT program, target, status, params, run_by FROM gpudl.learn_runs ORDER BY id;
   SELECT rank, rule, probability FROM gpudl.learned_rules;
   SELECT name, owner, acl FROM gpudl.programs ORDER BY name;
   SELECT * FROM gpudl.program_privileges ORDER BY 1, 3, 4;
   SELECT target, program, predicate, mode, maintained_by, rows, base_tables FROM gpudl.maintained ORDER BY 1;
   SELECT * FROM anc_kept ORDER BY 1, 2;
   SELECT tgname FROM pg_trigger WHERE tgrelid = 'parent'::regclass ORDER BY 1;"
a=$(psql -X -At -d $src -c "$q")
# the roles come back with new OIDs before the restore, as pg_dumpall -g would make them
dropdb $src
psql -X -q -d postgres -c "DROP ROLE dump_alice" -c "DROP ROLE dump_bob" -c "CREATE ROLE dump_filler" -c "$roles" \
  -c "DROP ROLE dump_filler"
psql -X -q -v ON_ERROR_STOP=1 -d $dst -f /tmp/gpudl_dump.sql >/dev/null
b=$(psql -X -At -d $dst -c "$q")
if [ "$a" != "$b" ]; then
  echo "catalog differs after restore"; diff <(echo "$a") <(echo "$b"); exit 1
fi
[ -n "$a" ] || { echo "empty catalog?"; exit 1; }
grep -q <<<"$b" '^moms|dump_alice|{dump_bob=wU/dump_alice,=U/dump_alice}$' \
  || { echo "owner and grants of moms not restored"; echo "$b"; exit 1; }
# the restored grant works: dump_bob may query family, not change it
[ "$(psql -X -q -At -d $dst -c "SET ROLE dump_bob" -c "SELECT gpudl_count('family', 'anc(X, Y)')")" = 6 ] \
  || { echo "dump_bob cannot use family after the restore"; exit 1; }
if psql -X -q -v ON_ERROR_STOP=1 -d $dst -c "SET ROLE dump_bob" -c "SELECT gpudl_add_rules('family', 'x(1).')" 2>/dev/null; then
  echo "dump_bob changed family after the restore"; exit 1
fi
# the restored maintained table is still maintained
kept_diff="SELECT (SELECT count(*) FROM (TABLE anc_kept EXCEPT SELECT * FROM gpudl_query('family', 'anc(X, Y)') AS t(a text, b text)) d)
             + (SELECT count(*) FROM (SELECT * FROM gpudl_query('family', 'anc(X, Y)') AS t(a text, b text) EXCEPT TABLE anc_kept) d)"
psql -X -q -v ON_ERROR_STOP=1 -d $dst -c "INSERT INTO parent VALUES ('d', 'e')" -c "DELETE FROM parent WHERE p = 'a'"
[ "$(psql -X -At -d $dst -c "$kept_diff")" = 0 ] || { echo "the maintained table is stale after the restore"; exit 1; }
[ "$(psql -X -At -d $dst -c "SELECT count(*) FROM anc_kept")" = 6 ] || { echo "anc_kept lost rows after the restore"; exit 1; }
unrelated_diff="SELECT (SELECT count(*) FROM (TABLE unrelated_kept EXCEPT SELECT * FROM gpudl_query('family', 'unrelated(X, Y)') AS t(a text, b text)) d)
             + (SELECT count(*) FROM (SELECT * FROM gpudl_query('family', 'unrelated(X, Y)') AS t(a text, b text) EXCEPT TABLE unrelated_kept) d)"
[ "$(psql -X -At -d $dst -c "$unrelated_diff")" = 0 ] || { echo "the table reading anc_kept is stale after the restore"; exit 1; }
[ "$(psql -X -At -d $dst -c "SELECT mode || ' ' || base_tables::text FROM gpudl.maintained WHERE target = 'unrelated_kept'::regclass")" = "incremental {parent,anc_kept}" ] \
  || { echo "unrelated_kept no longer reads anc_kept after the restore"; exit 1; }
# the restored programs still analyse, and new rules get fresh ids
psql -X -At -v ON_ERROR_STOP=1 -d $dst -c "SELECT count(*) FROM gpudl_explain('family')" | grep -qv '^0$'
psql -X -At -v ON_ERROR_STOP=1 -d $dst -c "SELECT gpudl_add_rules('family', 'root(X) :- parent(X, _), !parent(_, X).')" >/dev/null
[ "$(psql -X -At -d $dst -c "$kept_diff")" = 0 ] || { echo "the maintained table is stale after a rule edit"; exit 1; }
[ "$(psql -X -At -d $dst -c "$unrelated_diff")" = 0 ] || { echo "the table reading anc_kept is stale after a rule edit"; exit 1; }
dropdb $dst
psql -X -q -d postgres -c "DROP ROLE dump_alice" -c "DROP ROLE dump_bob"
echo "dump and restore: catalog identical, owners and grants kept, maintained tables maintained"
