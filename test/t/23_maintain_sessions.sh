#!/usr/bin/env bash
# 23_maintain_sessions: maintained tables under many sessions at once
# (issue 24).  pgbench runs writers (inserts, deletes, updates, some under
# REPEATABLE READ, which get serialization failures when another writer
# changed the same target since their snapshot; pgbench retries them, as
# clients of REPEATABLE READ must) and readers that check, in one REPEATABLE READ snapshot, that
# each maintained table equals the relation its program derives from the
# tables of that snapshot.  No transaction may fail, every read must be
# consistent, and at the end every table equals a full recomputation.
# The four tables: a closure, a negation, a chain over the closure and a
# count per group over the closure with a negation.  Run twice: with the
# default settings, and with every over-deletion checked against the
# relation computed afresh (gpudl.maintain_check_deletions = always).
source "$(dirname "$0")/../../tools/pgenv.sh"
set -e
export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning"
db=gpudl_maintain_sessions
dropdb --if-exists $db; createdb $db
run() { psql -X -q -v ON_ERROR_STOP=1 -d $db "$@"; }
run >/dev/null <<'SQL'
CREATE EXTENSION gpudl;
CREATE TABLE edge(a int, b int);
CREATE TABLE blocked(a int, b int);
INSERT INTO edge SELECT (random() * 20)::int, (random() * 20)::int FROM generate_series(1, 30);
INSERT INTO blocked SELECT (random() * 20)::int, (random() * 20)::int FROM generate_series(1, 10);
SELECT gpudl_create_program('tc', 'tc(X, Y) :- edge(X, Y).  tc(X, Z) :- tc(X, Y), edge(Y, Z).');
SELECT gpudl_create_program('ok', 'ok(X, Y) :- edge(X, Y), !blocked(X, Y).');
SELECT gpudl_materialize('tc', 'tc', 'tc', mode => 'maintain');
SELECT gpudl_materialize('ok', 'ok', 'ok', mode => 'maintain');
SELECT gpudl_create_program('two', 'two(X, Z) :- tc(X, Y), edge(Y, Z), X < Z.');
SELECT gpudl_materialize('two', 'two', 'two', mode => 'maintain');
SELECT gpudl_create_program('deg', 'deg(X, count(Y)) :- tc(X, Y), !blocked(X, Y).');
SELECT gpudl_materialize('deg', 'deg', 'deg', mode => 'maintain');
-- rows that differ between a maintained table and its program's relation
CREATE FUNCTION differs(prog text, goal text, tgt regclass) RETURNS bigint AS $$
DECLARE n bigint; cols text;
BEGIN
  SELECT string_agg(quote_ident(attname) || ' ' || format_type(atttypid, atttypmod), ', ' ORDER BY attnum)
    INTO cols FROM pg_attribute WHERE attrelid = tgt AND attnum > 0 AND NOT attisdropped;
  EXECUTE format('SELECT count(*) FROM ((TABLE %s EXCEPT ALL SELECT * FROM gpudl_query(%L, %L) AS t(%s)) '
                 'UNION ALL (SELECT * FROM gpudl_query(%L, %L) AS t(%s) EXCEPT ALL TABLE %s)) d',
                 tgt, prog, goal, cols, prog, goal, cols, tgt) INTO n;
  RETURN n;
END $$ LANGUAGE plpgsql;
CREATE FUNCTION check_all() RETURNS void AS $$
BEGIN
  IF differs('tc', 'tc(X, Y)', 'tc') <> 0 OR differs('ok', 'ok(X, Y)', 'ok') <> 0
     OR differs('two', 'two(X, Y)', 'two') <> 0 OR differs('deg', 'deg(X, Y)', 'deg') <> 0 THEN
    RAISE EXCEPTION 'a maintained table differs from its relation in this snapshot';
  END IF;
END $$ LANGUAGE plpgsql;
SQL
dir=$(mktemp -d)
cat >"$dir/insert.sql" <<'EOF2'
\set a random(0, 20)
\set b random(0, 20)
INSERT INTO edge VALUES (:a, :b);
EOF2
cat >"$dir/delete.sql" <<'EOF2'
\set a random(0, 20)
DELETE FROM edge WHERE ctid IN (SELECT ctid FROM edge WHERE a = :a LIMIT 1);
EOF2
cat >"$dir/update_rr.sql" <<'EOF2'
\set a random(0, 20)
\set b random(0, 20)
BEGIN ISOLATION LEVEL REPEATABLE READ;
UPDATE edge SET b = :b WHERE ctid IN (SELECT ctid FROM edge WHERE a = :a LIMIT 1);
INSERT INTO blocked VALUES (:b, :a);
END;
EOF2
cat >"$dir/rollback.sql" <<'EOF2'
\set a random(0, 20)
BEGIN;
DELETE FROM edge WHERE a = :a;
ROLLBACK;
EOF2
cat >"$dir/read.sql" <<'EOF2'
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT check_all();
END;
EOF2
# one pgbench run of 6 sessions for $2 seconds with extra settings $1
sessions() {
  out=$(PGOPTIONS="$PGOPTIONS $1" pgbench -n -c 6 -j 2 -T "$2" --max-tries=0 --failures-detailed \
    -f "$dir/insert.sql@4" -f "$dir/delete.sql@3" -f "$dir/update_rr.sql@1" -f "$dir/rollback.sql@1" \
    -f "$dir/read.sql@3" $db 2>&1) || { echo "$out"; echo "pgbench failed"; exit 1; }
  echo "$out" | grep -E "number of (transactions actually processed|failed transactions|transactions retried)|latency average"
  done_tx=$(echo "$out" | sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p')
  failed=$(echo "$out" | sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p')
  [ "${failed:-0}" = 0 ] || { echo "$failed transactions failed"; echo "$out"; exit 1; }
  [ "${done_tx:-0}" -gt 30 ] || { echo "too few transactions ran: $done_tx"; exit 1; }
  total=$(( ${total:-0} + done_tx ))
}
sessions "" 12
# every deletion's over-deletion checked against the relation computed afresh
sessions "-c gpudl.maintain_check_deletions=always" 8
rm -rf "$dir"
done_tx=$total
run -At -c "SELECT check_all()" >/dev/null || { echo "the tables differ after the run"; exit 1; }
changes=$(run -At -c "SELECT string_agg(target || ' ' || mode || ' ' || (changes > 20)::text, ', ' ORDER BY target::text) FROM gpudl.maintained")
[ "$changes" = "deg incremental true, ok incremental true, tc incremental true, two incremental true" ] \
  || { echo "unexpected maintenance record: $changes"; exit 1; }
dropdb $db
echo "maintained tables: $done_tx transactions of 6 sessions, none failed, every snapshot consistent"
