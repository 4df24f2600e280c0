#!/usr/bin/env bash
# 16_fuzz: a hostile-input sweep over the whole SQL API (issue 20).  A few
# thousand seeded random calls (test/t/fuzz_gen.py: FUZZ_SEED, FUZZ_CALLS)
# over tables of every built-in column type and relations with odd names:
# programs, rules, bindings, queries, loading, learning (types, noise,
# max_seconds, method, n-ary), mining, prediction, grants, other roles.
# Checks: no backend crash (same postmaster pid, no "terminated by signal"
# or "all server processes terminated" in the log), every refusal has a
# SQLSTATE other than XX000, and the catalog (gpudl.programs, rules,
# bindings, mined_rules, learned_rules) is the same after every refusal as
# before it.  Prints calls, successes and refusals by SQLSTATE.
source "$(dirname "$0")/../../tools/pgenv.sh"
set -e
db=gpudl_fuzz
seed=${FUZZ_SEED:-20}
ncalls=${FUZZ_CALLS:-3000}
chunk=250
work=${FUZZ_KEEP:-$(mktemp -d /tmp/gpudl_fuzz.XXXXXX)}; mkdir -p "$work"; rm -f "$work"/out.txt "$work"/err.txt
trap '[ -n "${FUZZ_KEEP:-}" ] || rm -rf "$work"' EXIT
log="$PGDATA/server.log"

dropdb --if-exists $db >/dev/null; createdb $db
psql -X -q -v ON_ERROR_STOP=1 -d $db >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION gpudl;
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fz_r1') THEN CREATE ROLE fz_r1; END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fz_r2') THEN CREATE ROLE fz_r2; END IF;
END $$;
GRANT USAGE ON SCHEMA public TO fz_r1, fz_r2;
-- a small knowledge graph, relations named as real data names them
CREATE TABLE kg_a(a text, b text);
INSERT INTO kg_a SELECT 'e' || i, 'e' || (i % 5 + 1) FROM generate_series(1, 5) i;
CREATE TABLE kg_b AS SELECT b AS a, a AS b FROM kg_a;
CREATE TABLE "co-occurs_with" AS SELECT * FROM kg_a;
CREATE TABLE "/film/film/genre" AS SELECT a, 'é' AS b FROM kg_a;
CREATE TABLE "has car" AS SELECT * FROM kg_b;
CREATE TABLE "Parent" AS SELECT * FROM kg_a WHERE a < 'e3';
CREATE TABLE "é" AS SELECT * FROM kg_a;
CREATE TABLE person AS SELECT a FROM kg_a;
CREATE TABLE fz_ex1(a text);
INSERT INTO fz_ex1 VALUES ('e1'), ('e2');
CREATE TABLE fz_ex2(a text, b text);
INSERT INTO fz_ex2 VALUES ('e1', 'e2'), ('e3', 'e4');
CREATE TABLE fz_out(a text, b text);
CREATE TYPE fz_mood AS ENUM ('sad', 'happy');
-- one table ty_<type>(a text, v <type>) per column type, with two rows where a literal casts
CREATE TABLE fz_types AS
  SELECT t.oid::regtype AS typ, t.typname AS tn
  FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
  WHERE n.nspname = 'pg_catalog' AND t.typtype = 'b' AND t.typcategory <> 'A' AND t.typisdefined
    AND t.typname NOT LIKE 'pg\_%' ESCAPE '\'
  UNION ALL VALUES ('fz_mood'::regtype, 'fz_mood'), ('int4range', 'int4range'), ('int[]', 'int_arr'),
                   ('pg_lsn', 'pg_lsn');
DO $$
DECLARE
  r record;
  lit text;
BEGIN
  FOR r IN SELECT * FROM fz_types LOOP
    EXECUTE format('CREATE TABLE %I(a text, v %s)', 'ty_' || r.tn, r.typ);
    FOREACH lit IN ARRAY ARRAY['7', 't', '2020-01-02', '2020-01-02 03:04:05+00', '03:04:05',
        'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '1.5', '10.0.0.1', '08:00:2b:01:02:03', '1 day',
        '(1,2)', '((1,2),(3,4))', '<(1,2),3>', '{1,2,3}', '{"a": 1}', '<a/>', '0/16B3748', 'a & b',
        '101', '\x0102', 'happy', '[1,5)', '{1,2}', '(0,1)', '10:20:', 'abc']
    LOOP
      BEGIN
        EXECUTE format('INSERT INTO %I VALUES (''e1'', %L::%s), (''e2'', %L::%s)', 'ty_' || r.tn, lit, r.typ, lit, r.typ);
        EXIT;
      EXCEPTION WHEN OTHERS THEN NULL;
      END;
    END LOOP;
  END LOOP;
END $$;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO fz_r1;
SELECT gpudl_create_program('fz_kg', 'q(X, Y) :- kg_a(X, Y). r(X, Y) :- kg_a(X, Z), kg_b(Z, Y).');
SELECT gpudl_bind('fz_kg', p, t) FROM (VALUES ('co-occurs_with', '"co-occurs_with"'),
  ('/film/film/genre', '"/film/film/genre"'), ('has car', '"has car"'), ('Parent', '"Parent"'), ('é', '"é"')) v(p, t);
SELECT gpudl_create_program('fz_types', string_agg(format('t_%s(A) :- ty_%s(A, _).', tn, tn), ' ')) FROM fz_types;
SELECT gpudl_create_program('fz_odd');
SELECT gpudl_create_program('fz_kg2', 'q(X, Y) :- kg_a(X, Y).');
SELECT gpudl_bind('fz_kg2', 'kg_b', 'kg_b');
SELECT gpudl_create_program('fz''q');
-- every type read as a value, where gpudl reads it (the others are refused: 42804)
SELECT gpudl_create_program('fz_vals');
DO $$
DECLARE r record;
BEGIN
  FOR r IN SELECT tn FROM fz_types LOOP
    BEGIN
      PERFORM gpudl_add_rules('fz_vals', format('v_%s(A, V) :- ty_%s(A, V).', r.tn, r.tn));
    EXCEPTION WHEN datatype_mismatch THEN NULL;
    END;
  END LOOP;
END $$;
SELECT gpudl_create_program('fz new', 'q(X) :- person(X).');
SELECT gpudl_create_program('fz/é', 'q(X, Y) :- kg_b(X, Y).');
SELECT gpudl_bind('fz/é', 'has car', '"has car"');
SELECT gpudl_bind('fz_odd', 'ty_' || tn, ('ty_' || tn)::regclass) FROM fz_types;
SELECT gpudl_grant('fz_kg', 'fz_r2', 'use');
-- the catalog's checksum, and one call in a subtransaction: ok, or its SQLSTATE (CHANGED: the catalog moved)
CREATE FUNCTION fz_catsum() RETURNS text LANGUAGE sql AS $f$
  -- a committed change shows as another row count or a newer xmin (a refused
  -- call's own writes are rolled back: only what it committed on the side counts)
  SELECT concat_ws('|',
    (SELECT count(*) || ':' || coalesce(max(xmin::text::bigint), 0) FROM gpudl.programs),
    (SELECT count(*) || ':' || coalesce(max(xmin::text::bigint), 0) FROM gpudl.rules),
    (SELECT count(*) || ':' || coalesce(max(xmin::text::bigint), 0) FROM gpudl.bindings),
    (SELECT count(*) || ':' || coalesce(max(xmin::text::bigint), 0) FROM gpudl.mined_rules),
    (SELECT count(*) || ':' || coalesce(max(xmin::text::bigint), 0) FROM gpudl.learned_rules))
$f$;
CREATE FUNCTION fz(q text) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
  before text := fz_catsum();
BEGIN
  BEGIN
    EXECUTE q;
    RETURN 'ok';
  EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || CASE WHEN fz_catsum() IS DISTINCT FROM before THEN ' CHANGED' ELSE '' END
      || ' ' || left(replace(SQLERRM, E'\n', ' '), 160);
  END;
END $f$;
SQL
psql -X -At -d $db -c "SELECT tn FROM fz_types ORDER BY tn" > "$work/types.txt"
python3 "$(dirname "$0")/fuzz_gen.py" "$seed" "$ncalls" "$chunk" "$work"

pm_before=$(head -1 "$PGDATA/postmaster.pid")
log_from=$(wc -c < "$log")
start=$(date +%s)
for f in "$work"/chunk_*.sql; do
  # each call is its own transaction; long ones stop at the timeout (57014, a refusal too)
  PGOPTIONS="-c statement_timeout=10s -c gpudl.max_iterations=5000 -c client_min_messages=error" \
    psql -X -At -v VERBOSITY=verbose -d $db -f "$f" >>"$work/out.txt" 2>>"$work/err.txt" || true
done
took=$(( $(date +%s) - start ))
pm_after=$(head -1 "$PGDATA/postmaster.pid" 2>/dev/null || echo gone)

set +e
python3 - "$work" "$ncalls" "$seed" "$took" <<'PY'
import collections, re, sys
work, ncalls, seed, took = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
calls = {}
for line in open(work + '/calls.txt', encoding='utf-8', errors='replace'):
    i, _, c = line.rstrip('\n').partition('\t')
    calls[int(i)] = c
seen, states, bad = set(), collections.Counter(), []
ok = 0
for line in open(work + '/out.txt', encoding='utf-8', errors='replace'):
    m = re.match(r'^(\d+)\|(.*)$', line.rstrip('\n'))
    if not m:
        continue
    i, res = int(m.group(1)), m.group(2)
    seen.add(i)
    if res == 'ok':
        ok += 1
        continue
    st = res[:5]
    states[st] += 1
    if st == 'XX000' or ' CHANGED' in res[:14]:
        bad.append('call %d: %s\n    %s' % (i, res[:300], calls.get(i, '?')[:400]))
# errors outside fz (query cancel by statement_timeout is not caught by WHEN OTHERS)
top = [l for l in open(work + '/err.txt', encoding='utf-8', errors='replace')
       if re.match(r'^(psql:[^ ]*: )?ERROR:', l)]
for l in top:
    m = re.search(r'ERROR:\s+([0-9A-Z]{5}):', l)
    st = m.group(1) if m else '?????'
    states[st] += 1
    if st in ('XX000', '?????'):
        bad.append('outside fz: ' + l.strip()[:300])
missing = ncalls - len(seen) - len(top)
print('fuzz (seed %s): %d calls in %s s, %d succeeded, %d refused' % (seed, ncalls, took, ok, sum(states.values())))
print('refusals by SQLSTATE: ' + ', '.join('%s %d' % kv for kv in sorted(states.items())))
if missing > 0:
    bad.append('%d calls gave no answer (a lost connection?)' % missing)
if bad:
    print('FAILURES:')
    print('\n'.join(bad[:40]))
    sys.exit(1)
PY
rc=$?
crash=$(tail -c +"$((log_from + 1))" "$log" | grep -E "terminated by signal|all server processes terminated|server process .* was terminated" || true)
if [ -n "$crash" ] || [ "$pm_before" != "$pm_after" ]; then
  echo "server crashed (postmaster $pm_before -> $pm_after):"; echo "$crash" | head -20
  exit 1
fi
echo "no crash: postmaster pid $pm_after unchanged, no backend terminated by a signal"
exit $rc
