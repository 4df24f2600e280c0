#!/usr/bin/env bash
# bench/ilp/family_sql.sh — the Family knowledge-graph benchmark through SQL
# (the SQL twin of bench/ilp/family.c): load shared/data/kg/family into
# tables, learn each of its 12 relations with gpudl_learn, run the learned
# program with gpudl_query, and score it on test.txt.
#
#   bash bench/ilp/family_sql.sh                                  # both negative modes, gpudl.device = auto
#   DEVICE=gpu NEG=closed_world RUNS=3 bash bench/ilp/family_sql.sh
#   GPUDL_PGHOST=/tmp GPUDL_PGPORT=5432 GPUDL_PGUSER=pg DATA_DIR=/path/to/family bash bench/ilp/family_sql.sh
#
# It needs a running PostgreSQL 15 with gpudl installed; it starts nothing.
# Settings (environment):
#   DATA_DIR   the graph (facts.txt train.txt valid.txt test.txt, "head TAB relation TAB tail");
#              default ../shared/data/kg/family relative to the repository root
#   DEVICE     cpu | gpu | auto: gpudl.device for every call (default auto)
#   NEG        negative sampling modes, space separated: pca, closed_world (default "pca closed_world")
#   RUNS       gpudl_learn calls per relation (default 1); time = their median; quality
#              (deterministic) from the last one, which commits the rules
#   MAX_BODY (2), MAX_RULES (32), EPOCHS (200), SEED (0), MIN_SUPPORT (1): gpudl_learn's
#              arguments, the SQL defaults (family.c's settings too)
#   RELATIONS  a subset of the relations, space separated (default: every relation in the data)
#   VERBOSE=1  also print the learned rules with their per-rule measures
#   WARMUP=1   (default) one small gpudl_learn call before timing, so the first
#              relation does not pay for loading the library or starting the GPU
#   BENCH_DB   database to (re)create (default gpudl_family_bench); if it cannot be
#              created, the connection's default database is used (schema famsql)
#   OUT        if set, a directory: the tables and rules are also written there
# Connection: GPUDL_PGHOST / GPUDL_PGPORT / GPUDL_PGUSER as in tools/pgenv.sh
# (else PGHOST / PGPORT / PGUSER, else /tmp, 54329, postgres).
#
# Measures (exactly as in bench/ilp/family.c; D = the facts the committed program
# derives for r over the background, i.e. the other 11 relations of facts + train;
# T = r's test triples; K = r's triples in facts, train and valid):
#   recall          = |D ∩ T| / |T|
#   precision       = |D ∩ (T ∪ K)| / |D|        ("all derived": the headline number)
#   prec_query      = the same over the answers r(h, y) in D whose head h is the head
#                     of some test triple (link-prediction style test queries)
#   prec_new        = |D ∩ T| / |(D ∩ T) ∪ (D \ K)|  (only facts not given to the learner
#                     and not in valid; the harshest)
#   time            = the gpudl_learn call alone (server side, clock_timestamp), median of
#                     RUNS; it includes reading the examples and background tables
# gpudl_learn has no argument for negatives per positive: it draws 4 (pca) or at most
# 50 (closed_world); family.c uses 20, see bench/ilp/RESULTS-family-sql.md.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
source "$here/../common/lib.sh"
bench_defaults DATA_DIR="$root/../shared/data/kg/family" DEVICE=auto NEG="pca closed_world" RUNS=1 \
  MAX_BODY=2 MAX_RULES=32 EPOCHS=200 SEED=0 MIN_SUPPORT=1 VERBOSE=0 WARMUP=1
DB="${BENCH_DB:-gpudl_family_bench}"
bench_connection
export PGOPTIONS="-c client_min_messages=warning"

die() { echo "family_sql.sh: $*" >&2; exit 1; }
case "$DEVICE" in cpu|gpu|auto) ;; *) die "DEVICE must be cpu, gpu or auto, not '$DEVICE'";; esac
for m in $NEG; do case "$m" in pca|closed_world) ;; *) die "NEG modes are pca and closed_world, not '$m'";; esac; done
for v in RUNS MAX_BODY MAX_RULES EPOCHS SEED MIN_SUPPORT; do
  [[ "${!v}" =~ ^[0-9]+$ ]] || die "$v must be a non-negative integer, not '${!v}'"
done
[ "$RUNS" -ge 1 ] || die "RUNS must be at least 1"
for f in facts train valid test; do
  [ -r "$DATA_DIR/$f.txt" ] || die "cannot read $DATA_DIR/$f.txt (set DATA_DIR)"
done
DATA_DIR="$(cd "$DATA_DIR" && pwd)"
if [ -n "${OUT:-}" ]; then mkdir -p "$OUT"; fi
command -v psql >/dev/null || die "psql is not on the PATH"

# the database: a fresh one when we may create it, else the default one
psql -X -q -d postgres -Atc "SELECT 1" >/dev/null 2>&1 \
  || die "cannot connect to PostgreSQL at host $PGHOST port $PGPORT as $PGUSER"
if psql -X -q -d postgres -v ON_ERROR_STOP=1 -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB" >/dev/null 2>&1 \
   && psql -X -q -d "$DB" -v ON_ERROR_STOP=1 -c "CREATE EXTENSION IF NOT EXISTS gpudl" >/dev/null 2>&1; then
  export PGDATABASE="$DB"
else
  echo "note: cannot create database $DB with gpudl in it; using the default database ${PGDATABASE:-$PGUSER}" >&2
  psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1 || true
fi
q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
t_all0=$(now)
failed=$(mktemp)
# --- load the graph: one staging table, then one table per relation (facts + train)
q -c "CREATE EXTENSION IF NOT EXISTS gpudl" \
  -c "DROP SCHEMA IF EXISTS famsql CASCADE" -c "CREATE SCHEMA famsql" \
  -c "CREATE TABLE famsql.stage(h bigint, r text, t bigint)" \
  -c "CREATE TABLE famsql.triples(split text, h bigint, r text, t bigint)" >/dev/null
for f in facts train valid test; do
  q -c "\\copy famsql.stage(h, r, t) FROM '$DATA_DIR/$f.txt'" \
    -c "INSERT INTO famsql.triples SELECT '$f', h, r, t FROM famsql.stage" -c "TRUNCATE famsql.stage" >/dev/null
done
q -c "CREATE INDEX ON famsql.triples(r, h, t)" -c "ANALYZE famsql.triples" >/dev/null

if [ -n "${RELATIONS:-}" ]; then
  rels="$RELATIONS"
else
  rels=$(q -c "SELECT DISTINCT r FROM famsql.triples ORDER BY r")
fi
for r in $rels; do
  [[ "$r" =~ ^[a-z][a-z0-9_]*$ ]] || die "relation '$r' is not a predicate name (lower case, digits, _)"
  [ "$(q -c "SELECT count(*) FROM famsql.triples WHERE r = '$r'")" -gt 0 ] || die "no triples of relation '$r'"
done
allrels=$(q -c "SELECT DISTINCT r FROM famsql.triples ORDER BY r")
for r in $allrels; do
  [[ "$r" =~ ^[a-z][a-z0-9_]*$ ]] || die "relation '$r' is not a predicate name"
  q -c "CREATE TABLE famsql.$r AS SELECT h, t FROM famsql.triples WHERE r = '$r' AND split IN ('facts', 'train')" \
    -c "ANALYZE famsql.$r" >/dev/null
done
counts=$(q -F ' ' -c "SELECT split, count(*) FROM famsql.triples GROUP BY split ORDER BY split" | paste -sd, - | sed 's/,/, /g')

# --- the learning and scoring functions (server side, so the timing is the call's)
q >/dev/null <<'SQL'
-- a program that knows the other relations as its tables (no rules yet)
CREATE FUNCTION famsql.make_program(prog text, target text, rels text[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE q text;
BEGIN
  IF EXISTS (SELECT 1 FROM gpudl.programs WHERE name = prog) THEN PERFORM gpudl_drop_program(prog); END IF;
  PERFORM gpudl_create_program(prog, NULL, 'family_sql.sh: background for ' || target);
  FOREACH q IN ARRAY rels LOOP
    IF q <> target THEN PERFORM gpudl_bind(prog, q, format('famsql.%I', q)::regclass); END IF;
  END LOOP;
END $$;
SQL
q >/dev/null <<'SQL'
-- one timed gpudl_learn call: seconds, rules, the device gpudl.learn_runs recorded
CREATE FUNCTION famsql.learn(prog text, target text, neg text, dev text, do_commit boolean,
                             mb int, mr int, ep int, sd int, ms int,
                             OUT secs float8, OUT nrules int, OUT device text)
LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz;
BEGIN
  PERFORM set_config('gpudl.device', dev, true);
  t0 := clock_timestamp();
  SELECT count(*) INTO nrules
    FROM gpudl_learn(prog, target, format('SELECT h, t FROM famsql.%I', target), NULL,
                     max_body => mb, max_rules => mr, epochs => ep, seed => sd, min_support => ms,
                     commit => do_commit, negative_sampling => neg);
  secs := extract(epoch FROM clock_timestamp() - t0);
  SELECT lr.device INTO device FROM gpudl.learn_runs lr WHERE lr.program = prog ORDER BY lr.id DESC LIMIT 1;
END $$;

-- the measures of family.c for what the program derives for target
CREATE FUNCTION famsql.score(prog text, target text, dev text,
                             OUT ntest bigint, OUT nder bigint, OUT hit bigint, OUT right_all bigint,
                             OUT fresh bigint, OUT q_ans bigint, OUT q_right bigint, OUT eval_secs float8)
LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
  PERFORM set_config('gpudl.device', dev, true);
  CREATE TEMP TABLE IF NOT EXISTS famsql_der(a bigint, b bigint);
  TRUNCATE famsql_der;
  IF EXISTS (SELECT 1 FROM gpudl.rules WHERE program = prog) THEN
    EXECUTE format('INSERT INTO famsql_der SELECT DISTINCT a, b FROM gpudl_query(%L, %L) AS t(a bigint, b bigint)',
                   prog, target || '(X, Y)');
  END IF;
  eval_secs := extract(epoch FROM clock_timestamp() - t0);
  SELECT count(*) INTO ntest FROM (SELECT DISTINCT h, t FROM famsql.triples WHERE r = target AND split = 'test') x;
  SELECT count(*),
         count(*) FILTER (WHERE in_test),
         count(*) FILTER (WHERE in_test OR in_known),
         count(*) FILTER (WHERE in_test OR NOT in_known),
         count(*) FILTER (WHERE is_query),
         count(*) FILTER (WHERE is_query AND (in_test OR in_known))
    INTO nder, hit, right_all, fresh, q_ans, q_right
    FROM (SELECT EXISTS (SELECT 1 FROM famsql.triples x WHERE x.r = target AND x.split = 'test'
                           AND x.h = d.a AND x.t = d.b) AS in_test,
                 EXISTS (SELECT 1 FROM famsql.triples x WHERE x.r = target AND x.split <> 'test'
                           AND x.h = d.a AND x.t = d.b) AS in_known,
                 EXISTS (SELECT 1 FROM famsql.triples x WHERE x.r = target AND x.split = 'test'
                           AND x.h = d.a) AS is_query
            FROM famsql_der d) s;
END $$;
SQL

relarr="{$(echo $allrels | tr ' ' ',')}"
machine="$(uname -n), $(nproc) cores$(command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | head -1 | sed 's/^/, /' || true)"
echo "# Family KG through SQL ($(date -u '+%Y-%m-%d %H:%M UTC'))"
echo
echo "Data: $DATA_DIR ($counts); machine: $machine; PostgreSQL at $PGHOST:$PGPORT, database $(q -c 'SELECT current_database()')."
echo "gpudl_learn(max_body => $MAX_BODY, max_rules => $MAX_RULES, epochs => $EPOCHS, seed => $SEED, min_support => $MIN_SUPPORT), gpudl.device = $DEVICE, RUNS = $RUNS."
echo

median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print 0; else print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

for mode in $NEG; do
  # one psql session per mode: the library, the GPU and the plan cache stay warm
  script=$(mktemp)
  {
    echo "\\set ON_ERROR_STOP 1"
    echo "SET client_min_messages = warning;"
    for r in $rels; do echo "SELECT famsql.make_program('famsql_$r', '$r', '$relarr');"; done
    if [ "$WARMUP" = 1 ]; then
      r1=$(echo $rels | awk '{print $1}')
      echo "SELECT 'WARMUP|' || nrules FROM famsql.learn('famsql_$r1', '$r1', '$mode', '$DEVICE', false, 1, 4, 5, 0, 1);"
    fi
    for r in $rels; do
      for i in $(seq 1 "$RUNS"); do
        c=false; [ "$i" = "$RUNS" ] && c=true
        echo "SELECT concat_ws('|', 'LEARN', '$r', $i, secs, nrules, device) FROM famsql.learn('famsql_$r', '$r', '$mode', '$DEVICE', $c, $MAX_BODY, $MAX_RULES, $EPOCHS, $SEED, $MIN_SUPPORT);"
      done
      echo "SELECT concat_ws('|', 'SCORE', '$r', (SELECT count(*) FROM famsql.$r), ntest, nder, hit, right_all, fresh, q_ans, q_right, eval_secs) FROM famsql.score('famsql_$r', '$r', '$DEVICE');"
      echo "SELECT concat_ws('|', 'RULE', '$r', lr.rank, round(lr.probability::numeric, 3), round(lr.precision::numeric, 3), round(lr.recall::numeric, 3), round(lr.std_confidence::numeric, 3), round(lr.pca_confidence::numeric, 3), lr.rule) FROM gpudl.learned_rules lr WHERE lr.run_id = (SELECT max(id) FROM gpudl.learn_runs WHERE program = 'famsql_$r') ORDER BY lr.rank;"
    done
  } >"$script"
  t0=$(now)
  if ! res=$(q -f "$script" 2>&1); then
    echo "## negative_sampling => '$mode': failed"
    echo
    echo '```'
    echo "$res" | tail -20
    echo '```'
    echo "$mode" >>"$failed"
    rm -f "$script"
    continue
  fi
  wall=$(elapsed "$t0")
  table=$(
    echo "## negative_sampling => '$mode'"
    echo
    echo "| relation | positives | test | derived | recall | precision (all derived) | precision (test queries) | precision (new facts) | rules | learn s (median of $RUNS) | device |"
    echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
    for r in $rels; do
      learn=$(echo "$res" | awk -F'|' -v r="$r" '$1 == "LEARN" && $2 == r')
      secs=$(echo "$learn" | awk -F'|' '{print $4}' | median)
      nrules=$(echo "$learn" | tail -1 | awk -F'|' '{print $5}')
      dev=$(echo "$learn" | tail -1 | awk -F'|' '{print $6}')
      echo "$res" | awk -F'|' -v r="$r" -v secs="$secs" -v nr="$nrules" -v dev="$dev" '
        $1 == "SCORE" && $2 == r {
          pos = $3; nt = $4; nd = $5; hit = $6; ra = $7; fr = $8; qa = $9; qr = $10
          rec = nt > 0 ? hit / nt : 0; pa = nd > 0 ? ra / nd : 0
          pq = qa > 0 ? qr / qa : 0; pn = fr > 0 ? hit / fr : 0
          printf "| %s | %d | %d | %d | %.3f | %.3f | %.3f | %.3f | %d | %.3f | %s |\n", r, pos, nt, nd, rec, pa, pq, pn, nr, secs, dev
        }'
    done
  )
  body=$(echo "$table" | grep -E '^\| [a-z]' | grep -v '^| relation' || true)
  echo "$table"
  echo "$body" | awk -F'|' -v wall="$wall" '
    { n++; rec += $6; pa += $7; pq += $8; pn += $9; t += $11 }
    END { if (n) printf "| **average (%d)** | | | | **%.3f** | **%.3f** | %.3f | %.3f | | **%.3f total** | |\n", n, rec/n, pa/n, pq/n, pn/n, t }'
  echo
  echo "Session wall time (programs, learning, scoring): $wall s."
  echo
  if [ "$VERBOSE" = 1 ] || [ -n "${OUT:-}" ]; then
    rules=$(echo "$res" | awk -F'|' '$1 == "RULE" {
      rule = $9; for (i = 10; i <= NF; i++) rule = rule "|" $i
      printf "%-9s %2d p=%s prec=%s rec=%s std=%s pca=%s  %s\n", $2, $3, $4, $5, $6, $7, $8, rule }')
    [ "$VERBOSE" = 1 ] && { echo '```'; echo "$rules"; echo '```'; echo; }
    [ -n "${OUT:-}" ] && echo "$rules" >"$OUT/family_sql_rules_$mode.txt"
  fi
  rm -f "$script"
done | { if [ -n "${OUT:-}" ]; then tee "$OUT/family_sql.md"; else cat; fi; }
echo "Total wall time of the script: $(elapsed "$t_all0") s (loading, every mode, scoring)." \
  | { if [ -n "${OUT:-}" ]; then tee -a "$OUT/family_sql.md"; else cat; fi; }
if [ -s "$failed" ]; then rm -f "$failed"; exit 1; fi
rm -f "$failed"
