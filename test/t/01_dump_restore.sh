#!/usr/bin/env bash
# 01_dump_restore: pg_dump keeps programs, rules, bindings and learning
# history; a restored database has the same catalog rows and the programs
# still analyse.
source "$(dirname "$0")/../../tools/pgenv.sh"
set -e
export PGOPTIONS="-c client_min_messages=warning"
src=gpudl_dump_src; dst=gpudl_dump_dst
dropdb --if-exists $src; dropdb --if-exists $dst
createdb $src; createdb $dst
psql -X -q -v ON_ERROR_STOP=1 -d $src <<'SQL'
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
SQL
pg_dump -d $src >/tmp/gpudl_dump.sql
psql -X -q -v ON_ERROR_STOP=1 -d $dst -f /tmp/gpudl_dump.sql >/dev/null
q="SELECT p.name, p.description, r.id, r.rule, r.head, r.learned, r.enabled FROM gpudl.programs p JOIN gpudl.rules r ON r.program = p.name ORDER BY r.id;
   SELECT program, predicate, relation::text, columns FROM gpudl.bindings;
   SELECT program, target, status, params FROM gpudl.learn_runs;
   SELECT rank, rule, probability FROM gpudl.learned_rules;"
a=$(psql -X -At -d $src -c "$q"); b=$(psql -X -At -d $dst -c "$q")
if [ "$a" != "$b" ]; then
  echo "catalog differs after restore"; diff <(echo "$a") <(echo "$b"); exit 1
fi
[ -n "$a" ] || { echo "empty catalog?"; exit 1; }
# the restored programs still analyse, and new rules get fresh ids
psql -X -At -v ON_ERROR_STOP=1 -d $dst -c "SELECT count(*) FROM gpudl_explain('family')" | grep -qv '^0$'
psql -X -At -v ON_ERROR_STOP=1 -d $dst -c "SELECT gpudl_add_rules('family', 'root(X) :- parent(X, _), !parent(_, X).')" >/dev/null
dropdb $src; dropdb $dst
echo "dump and restore: catalog identical"
