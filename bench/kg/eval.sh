#!/usr/bin/env bash
# bench/kg/eval.sh — link prediction on knowledge graphs through SQL:
# gpudl_mine once (commit => true), then gpudl_predict with a table of
# queries per relation, scored the standard way (filtered MRR, Hits@1,
# Hits@10, ties at their expected rank; see score.sql).
#
#   bash bench/kg/eval.sh                       # family and kinship, test split
#   SPLIT=valid MAX_BODY=2 AGG=noisy_or bash bench/kg/eval.sh kinship
#
# It needs a running PostgreSQL 15 with gpudl installed (and may create
# databases); it starts nothing.  Settings (environment):
#   DATA_ROOT   where <name>/{facts,train,valid,test,entities}.txt are, each
#               also as .txt.gz, facts.txt optional (default ../shared/data/kg
#               relative to the repository root).  Any folder name works
#               (fb15k-237: database gpudl_kg_fb15k_237), and relations keep
#               their names ('/film/film/genre': rules write it quoted).
#   SPLIT       the triples asked: test (default) or valid (choose settings on valid only)
#   MAX_BODY, MIN_HC (0.01), MIN_CONF, MIN_SUPPORT (1): gpudl_mine's thresholds
#   CONSTANTS   true: also rules with constants (gpudl_mine's constants; default false)
#   MAX_BODY_CONST, CONST_HC: gpudl_mine's max_body_constants and
#               constants_min_head_coverage (default NULL: max_body, min_head_coverage)
#   MAX_SECONDS gpudl_mine's anytime budget (default NULL: none)
#   AGG (max | noisy_or | cluster_noisy_or | kind_noisy_or | weighted), CONF (pca | std), SMOOTH:
#               gpudl_predict's scoring; weighted: the weights fitted on the valid
#               split (gpudl_fit_weights; scoring valid, in two folds by relation,
#               each fold predicted with the other's weights), "fitting:" its time
# Unset, the settings are those chosen on the valid split (RESULTS.md):
#   family   MAX_BODY=2 MIN_CONF=0.1 CONF=std SMOOTH=20 AGG=max
#   kinship  MAX_BODY=3 MIN_CONF=0.4 CONF=std SMOOTH=20 AGG=max
#   other    MAX_BODY=3 MIN_CONF=0.1 CONF=std SMOOTH=20 AGG=max (the SQL defaults;
#            bench/kg/auto.sh chooses max_body on the valid split instead)
#   DEVICE      gpudl.device (auto)
#   KEEP=1      keep the database (gpudl_kg_<name>, other characters than
#               letters, digits and _ as _) afterwards
#   REUSE=1     use the graph a KEEP=1 run left in that database (skip loading)
#   PREDICT_ONLY=1  with REUSE=1: keep the rules that run stored (skip mining),
#               for a sweep of the scoring settings
#   PHASES=1    the DEBUG1 lines of gpudl_mine and gpudl_predict: where each call's time goes
#   KG_CACHE=1  count the changes of table triples (gpudl_load once, then
#               unload: the trigger stays), so that one session keeps the
#               graph and its parsed rules between calls (0.6); else
#               gpudl.kg_cache is off and every call reads them
# Connection: GPUDL_PGHOST / GPUDL_PGPORT / GPUDL_PGUSER (else PGHOST ..., /tmp, 54329, postgres).
# The graph is facts ∪ train; every split's triples are filtered.  Times are
# wall-clock seconds of the gpudl_mine call and of the gpudl_predict call
# (the whole split in one call, target NULL; PER_RELATION=1: one call per
# relation, as before 0.5), measured around the statements on the server.
# The rules and answers go to UNLOGGED tables: they are the benchmark's
# scratch, and writing millions of answers through the WAL timed the disk
# (checkpoints every few seconds at the default max_wal_size).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
source "$here/../common/lib.sh"
bench_defaults DATA_ROOT="$root/../shared/data/kg" SPLIT=test MIN_HC=0.01 MIN_SUPPORT=1 CONSTANTS=false \
  MAX_BODY_CONST=NULL CONST_HC=NULL MAX_SECONDS=NULL AGG=max DEVICE=auto
user_max_body="${MAX_BODY:-}" user_min_conf="${MIN_CONF:-}" user_conf="${CONF:-}" user_smooth="${SMOOTH:-}"
# the settings chosen on the valid split, unless given
settings_for() {
  case "$1" in
    family)  MAX_BODY=2 MIN_CONF=0.1 CONF=std SMOOTH=20 ;;
    kinship) MAX_BODY=3 MIN_CONF=0.4 CONF=std SMOOTH=20 ;;
    *)       MAX_BODY=3 MIN_CONF=0.1 CONF=std SMOOTH=20 ;;
  esac
  MAX_BODY="${user_max_body:-$MAX_BODY}" MIN_CONF="${user_min_conf:-$MIN_CONF}"
  CONF="${user_conf:-$CONF}" SMOOTH="${user_smooth:-$SMOOTH}"
}
bench_connection
export PGOPTIONS="-c client_min_messages=warning -c gpudl.device=$DEVICE"
names=("$@"); [ ${#names[@]} -gt 0 ] || names=(family kinship)

# one split's lines from dir/split.txt or dir/split.txt.gz (nothing if neither)
split_lines() {
  if [ -f "$1/$2.txt" ]; then cat "$1/$2.txt"
  elif [ -f "$1/$2.txt.gz" ]; then gzip -dc "$1/$2.txt.gz"; fi
}
# what load.sql reads on its standard input: triples with their split, \., entities, \.
kg_stream() {
  local s
  for s in facts train valid test; do
    split_lines "$1" "$s" | awk -v s="$s" 'BEGIN { FS = OFS = "\t" }
      { sub(/\r$/, ""); gsub(/\\/, "\\\\\\\\") } NF >= 3 { print $1, $2, $3, s }'
  done
  printf '\\.\n'
  split_lines "$1" entities | awk 'BEGIN { FS = "\t" } { sub(/\r$/, ""); gsub(/\\/, "\\\\\\\\") } $1 != "" { print $1 }'
  printf '\\.\n'
}

for name in "${names[@]}"; do
  dir="$DATA_ROOT/$name"
  settings_for "$name"
  [ -f "$dir/train.txt" ] || [ -f "$dir/train.txt.gz" ] || { echo "no data in $dir" >&2; exit 1; }
  # a database name from any folder name: letters, digits and _ only, at most 63 bytes
  db="gpudl_kg_$(basename "$name" | tr -c 'A-Za-z0-9_\n' '_' | tr 'A-Z' 'a-z')"
  db="${db:0:63}"
  q() { psql -X -q -v ON_ERROR_STOP=1 -d "$db" "$@"; }
  if [ "${REUSE:-0}" = 1 ] && psql -X -q -d "$db" -c "SELECT FROM triples LIMIT 0" >/dev/null 2>&1; then
    q -c "DROP TABLE IF EXISTS preds"             # the graph loaded by an earlier KEEP=1 run
  else
    psql -X -q -d postgres -c "DROP DATABASE IF EXISTS \"$db\"" -c "CREATE DATABASE \"$db\""
    q -c "CREATE EXTENSION gpudl"
    t0=$(date +%s.%N)
    kg_stream "$dir" | q -v program=kg -f "$here/load.sql" >/dev/null
    echo "loading: $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s"
  fi
  echo "== $name: split $SPLIT; max_body $MAX_BODY, min_head_coverage $MIN_HC, min_confidence $MIN_CONF," \
       "min_support $MIN_SUPPORT, constants $CONSTANTS (max_body $MAX_BODY_CONST, head coverage $CONST_HC)," \
       "max_seconds $MAX_SECONDS; aggregation $AGG, confidence $CONF, smoothing $SMOOTH; device $DEVICE"
  q -At -c "SELECT 'graph: ' || count(*) || ' triples (facts + train), ' || (SELECT count(*) FROM relations) || ' relations, '
                   || (SELECT count(*) FROM entities) || ' entities; asked: ' || (SELECT count(*) FROM triples WHERE split = '$SPLIT') || ' triples x 2'
              FROM triples WHERE split IN ('facts', 'train')"
  if [ "${KG_CACHE:-0}" = 1 ]; then
    q -At -c "SELECT 'triples: changes counted (' || gpudl_load('triples') || ' rows loaded once)'" -c "SELECT gpudl_unload('triples')" | grep .
    cache_setting=on
  else
    cache_setting=off
  fi
  q -At -v split="$SPLIT" -v agg="$AGG" -v conf="$CONF" -v smooth="$SMOOTH" <<SQL
\set ON_ERROR_STOP 1
SET gpudl.kg_cache = $cache_setting;
$([ "${PHASES:-0}" = 1 ] && echo "SET client_min_messages = debug1;")
SELECT clock_timestamp() AS t0 \gset
$(if [ "${PREDICT_ONLY:-0}" = 1 ]; then cat <<'STORED'
SELECT 'mining: skipped, ' || (SELECT count(*) FROM gpudl.mined_rules WHERE program = 'kg') || ' stored rules';
STORED
else cat <<MINE
SELECT count(*) AS nmined FROM gpudl_mine('kg', max_body => $MAX_BODY, min_head_coverage => $MIN_HC,
    min_confidence => $MIN_CONF, min_support => $MIN_SUPPORT, commit => true, constants => $CONSTANTS,
    max_body_constants => $MAX_BODY_CONST, constants_min_head_coverage => $CONST_HC, max_seconds => $MAX_SECONDS) \gset
SELECT 'mining: ' || :nmined || ' rules in '
       || round(extract(epoch FROM clock_timestamp() - :'t0'::timestamptz)::numeric, 2) || ' s';
MINE
fi)
SELECT clock_timestamp() AS t1 \gset
$(if [ "${PER_RELATION:-0}" = 1 ]; then cat <<'PER'
CREATE UNLOGGED TABLE preds AS
  SELECT p.query, p.answer, p.score, p.rank
    FROM relations rel,
         LATERAL gpudl_predict('kg', rel.r,
             format('SELECT h, NULL::text FROM triples WHERE r = %L AND split = %L
                     UNION SELECT NULL::text, t FROM triples WHERE r = %L AND split = %L',
                    rel.r, :'split', rel.r, :'split'),
             aggregation => :'agg', "limit" => 0, confidence => :'conf', smoothing => :smooth,
             rules_shown => 0) p
   -- a relation with no triple in the graph is no predicate of it: its queries have no answers
   WHERE EXISTS (SELECT FROM triples g WHERE g.r = rel.r AND g.split IN ('facts', 'train'));
PER
elif [ "$AGG" = weighted ]; then cat <<'WEIGHTED'
-- 'weighted': the weights fitted on the valid split (gpudl_fit_weights),
-- never on the split scored.  Scoring valid itself, two folds by relation:
-- each half of the relations predicted with weights fitted on the other
-- half's triples (the weights are the same for every relation), so that
-- the valid MRR auto.sh compares is out of sample as the others' are.
\set asked 'EXISTS (SELECT FROM triples g WHERE g.r = q.r AND g.split IN (''facts'', ''train''))'
\set fold '(hashtext(q.r) & 1)'
SELECT :'split' = 'valid' AS by_folds, CASE WHEN :'split' = 'valid' THEN '{0,1}' ELSE '{-1}' END AS folds \gset
\if :by_folds
SELECT gpudl_fit_weights('kg', format('SELECT r, h, t FROM triples q WHERE split = ''valid'' AND %s AND %s <> 0', :'asked', :'fold'),
                         confidence => :'conf', smoothing => :smooth) AS w0,
       gpudl_fit_weights('kg', format('SELECT r, h, t FROM triples q WHERE split = ''valid'' AND %s AND %s <> 1', :'asked', :'fold'),
                         confidence => :'conf', smoothing => :smooth) AS w1 \gset
\else
SELECT gpudl_fit_weights('kg', format('SELECT r, h, t FROM triples q WHERE split = ''valid'' AND %s', :'asked'),
                         confidence => :'conf', smoothing => :smooth) AS w0 \gset
\set w1 :w0
\endif
SELECT 'fitting: ' || round(extract(epoch FROM clock_timestamp() - :'t1'::timestamptz)::numeric, 2)
       || ' s, weights ' || :'w0' || CASE WHEN :'split' = 'valid' THEN ' (relations of fold 0), ' || :'w1' || ' (fold 1)' ELSE '' END;
SELECT clock_timestamp() AS t1 \gset
CREATE UNLOGGED TABLE preds AS
  SELECT p.query, p.answer, p.score, p.rank
    FROM (SELECT f, CASE WHEN f = 1 THEN :'w1' ELSE :'w0' END::float8[] AS w FROM unnest(:'folds'::int[]) f) fw,
         LATERAL gpudl_predict('kg', NULL,
             format('SELECT r, h, NULL::text FROM triples q WHERE split = %1$L AND %2$s AND (%3$s OR %4$s = %5$s)
                     UNION SELECT r, NULL::text, t FROM triples q WHERE split = %1$L AND %2$s AND (%3$s OR %4$s = %5$s)',
                    :'split', :'asked', (fw.f < 0)::text, :'fold', fw.f),
             aggregation => 'weighted', weights => fw.w, "limit" => 0, confidence => :'conf', smoothing => :smooth,
             rules_shown => 0) p;
WEIGHTED
else cat <<'ONE'
-- the whole split in one call (target NULL): rows (relation, subject, object)
CREATE UNLOGGED TABLE preds AS
  SELECT p.query, p.answer, p.score, p.rank
    FROM gpudl_predict('kg', NULL,
             format('SELECT r, h, NULL::text FROM triples q WHERE split = %1$L AND %2$s
                     UNION SELECT r, NULL::text, t FROM triples q WHERE split = %1$L AND %2$s',
                    :'split',
                    -- a relation with no triple in the graph is no predicate of it: not asked
                    'EXISTS (SELECT FROM triples g WHERE g.r = q.r AND g.split IN (''facts'', ''train''))'),
             aggregation => :'agg', "limit" => 0, confidence => :'conf', smoothing => :smooth,
             rules_shown => 0) p;
ONE
fi)
-- the time before the counts below (counting 12 M answers' distinct queries is no part of predicting)
SELECT clock_timestamp() AS t2 \gset
SELECT 'prediction: ' || (SELECT count(DISTINCT query) FROM preds) || ' queries with answers, '
       || (SELECT count(*) FROM preds) || ' answers in '
       || round(extract(epoch FROM :'t2'::timestamptz - :'t1'::timestamptz)::numeric, 2) || ' s (gpudl.kg_cache $cache_setting'
       || coalesce((SELECT ': the graph read once, reused ' || hits || ' times' FROM gpudl_kg_cache_status()), '') || ')';
SQL
  t0=$(date +%s.%N)
  q -v split="$SPLIT" -f "$here/score.sql"
  echo "scoring: $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s"
  [ "${KEEP:-0}" = 1 ] || psql -X -q -d postgres -c "DROP DATABASE \"$db\""
done
