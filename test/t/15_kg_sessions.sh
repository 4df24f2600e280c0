#!/usr/bin/env bash
# 15_kg_sessions: many sessions mining and predicting on one program at the
# same time.  Two roles commit mined rules for the same target over and over
# (two different rule sets, with and without constants), while readers
# predict with the stored rules, mine without committing, and predict with
# rules mined for the call.  Every answer must equal a solo run's (a
# prediction with stored rules: the solo answer of one of the two sets,
# never a mix), no session may fail, and at the end gpudl.mined_rules holds
# exactly one commit's rows.
source "$(dirname "$0")/../../tools/pgenv.sh"
set -e
export PGOPTIONS="-c client_min_messages=warning"
db=gpudl_kg_sessions
rounds=${GDL_KG_SESSION_ROUNDS:-4}
out=$(mktemp -d)
dropdb --if-exists $db; createdb $db
psql -X -q -d postgres -c "DROP ROLE IF EXISTS kgs_owner" -c "DROP ROLE IF EXISTS kgs_editor" \
  -c "DROP ROLE IF EXISTS kgs_reader" -c "DROP ROLE IF EXISTS kgs_reader2" \
  -c "CREATE ROLE kgs_owner" -c "CREATE ROLE kgs_editor" -c "CREATE ROLE kgs_reader" -c "CREATE ROLE kgs_reader2"
run() { psql -X -q -v ON_ERROR_STOP=1 -d $db "$@"; }
# a family graph: a ternary tree of 150 people, siblings (some missing),
# where people live (siblings together) and their generation
run >/dev/null <<'SQL'
CREATE EXTENSION gpudl;
CREATE SCHEMA kg AUTHORIZATION kgs_owner;
GRANT USAGE ON SCHEMA kg TO kgs_editor, kgs_reader, kgs_reader2;
SET ROLE kgs_owner;
CREATE TABLE kg.parent(p text, c text);
INSERT INTO kg.parent SELECT 'p' || ((i - 1) / 3), 'p' || i FROM generate_series(1, 149) i;
CREATE TABLE kg.sib(a text, b text);
INSERT INTO kg.sib SELECT 'p' || i, 'p' || j FROM generate_series(1, 149) i, generate_series(1, 149) j
 WHERE i <> j AND (i - 1) / 3 = (j - 1) / 3 AND (i + j) % 7 <> 0;
CREATE TABLE kg.lives(p text, city text);
INSERT INTO kg.lives SELECT 'p' || i, 'c' || (((i - 1) / 3) % 4) FROM generate_series(1, 149) i WHERE i % 5 <> 0;
CREATE TABLE kg.gen(p text, g text);
INSERT INTO kg.gen SELECT 'p' || i, CASE WHEN i = 0 THEN 'g0' WHEN i < 4 THEN 'g1' WHEN i < 13 THEN 'g2'
  WHEN i < 40 THEN 'g3' ELSE 'g4' END FROM generate_series(0, 149) i;
CREATE TABLE kg.queries(s text, o text);
INSERT INTO kg.queries SELECT 'p' || i, NULL FROM generate_series(1, 149, 6) i;
INSERT INTO kg.queries SELECT NULL, 'p' || i FROM generate_series(2, 149, 11) i;
GRANT SELECT ON ALL TABLES IN SCHEMA kg TO kgs_editor, kgs_reader, kgs_reader2;
SELECT gpudl_create_program('fam');
SELECT gpudl_bind('fam', t, 'kg.' || t) FROM unnest(ARRAY['parent', 'sib', 'lives', 'gen']) t;
SELECT gpudl_grant('fam', 'kgs_editor', 'modify');
SELECT gpudl_grant('fam', 'kgs_reader', 'use');
SELECT gpudl_grant('fam', 'kgs_reader2', 'use');
SQL

# the statements the sessions run; each prints "<tag> <md5 of its ordered answer>"
mine_a="gpudl_mine('fam', 'sib', max_body => 2, constants => true"
mine_b="gpudl_mine('fam', 'sib', max_body => 1, min_confidence => 0.2"
digest_mine="coalesce(md5(string_agg(format('%s|%s|%s|%s|%s|%s|%s', rule, support, head_coverage, std_confidence, pca_confidence, body_size, pca_body_size), ';' ORDER BY rule)), 'none')"
commit_a="SELECT 'commit_a ' || $digest_mine FROM $mine_a, commit => true);"
commit_b="SELECT 'commit_b ' || $digest_mine FROM $mine_b, commit => true);"
look_a="SELECT 'mine_a ' || $digest_mine FROM $mine_a);"
look_b="SELECT 'mine_b ' || $digest_mine FROM $mine_b);"
digest_pred="coalesce(md5(string_agg(format('%s|%s|%s|%s|%s', query, answer, score, rank, rules), ';' ORDER BY query, rank, answer)), 'none')"
pred_sib="SELECT 'pred_sib ' || $digest_pred FROM gpudl_predict('fam', 'sib', 'kg.queries', \"limit\" => 0, exclude_known => false);"
pred_call="SELECT 'pred_call ' || $digest_pred FROM gpudl_predict('fam', 'lives', 'kg.queries', \"limit\" => 0, max_body => 2, constants => true);"
stored="SELECT 'stored ' || md5(string_agg(format('%s|%s|%s|%s|%s|%s|%s|%s', rule, support, head_coverage, std_confidence, pca_confidence, body_size, pca_body_size, params), ';' ORDER BY rule)) FROM gpudl.mined_rules WHERE program = 'fam' AND target = 'sib';"

# solo runs, one at a time
solo() { run -At -c "$1"; }
s_mine_a=$(solo "SET ROLE kgs_reader; $look_a")
s_mine_b=$(solo "SET ROLE kgs_reader; $look_b")
s_pred_call=$(solo "SET ROLE kgs_reader2; $pred_call")
solo "SET ROLE kgs_owner; $commit_a" >/dev/null
s_stored_a=$(solo "$stored")
s_pred_a=$(solo "SET ROLE kgs_reader; $pred_sib")
solo "SET ROLE kgs_editor; $commit_b" >/dev/null
s_stored_b=$(solo "$stored")
s_pred_b=$(solo "SET ROLE kgs_reader; $pred_sib")
[ "$s_pred_a" != "$s_pred_b" ] && [ "$s_pred_a" != "pred_sib none" ] && [ "$s_pred_b" != "pred_sib none" ] \
  || { echo "the two rule sets predict the same or nothing: no test ($s_pred_a, $s_pred_b)"; exit 1; }
[ "$(solo "SELECT count(*) FROM gpudl.mined_rules WHERE program = 'fam' AND rule LIKE '%\"%'")" = 0 ] \
  || { echo "set B has constants?"; exit 1; }
solo "SET ROLE kgs_owner; $commit_a" >/dev/null
[ "$(solo "SELECT count(*) > 0 FROM gpudl.mined_rules WHERE program = 'fam' AND rule LIKE '%\"%'")" = t ] \
  || { echo "set A has no constants?"; exit 1; }

# the sessions, all at once: two committers, three readers
session() {
  local name=$1 role=$2; shift 2
  { echo "\\set QUIET on"; echo "SET ROLE $role;"; for ((i = 0; i < rounds; i++)); do printf '%s\n' "$@"; done; } \
    | psql -X -At -v ON_ERROR_STOP=1 -d $db >"$out/$name.out" 2>"$out/$name.err"
}
session owner kgs_owner "$commit_a" "$commit_b" "$pred_sib" &
p1=$!
session editor kgs_editor "$commit_b" "$commit_a" &
p2=$!
session reader kgs_reader "$pred_sib" "$look_a" "$pred_sib" &
p3=$!
session reader2 kgs_reader2 "$pred_call" "$pred_sib" &
p4=$!
session reader3 kgs_reader "$look_b" "$pred_sib" "$pred_sib" &
p5=$!
fail=0
for p in $p1 $p2 $p3 $p4 $p5; do wait $p || fail=1; done
for f in "$out"/*.err; do
  if [ -s "$f" ]; then echo "== $(basename "$f")"; cat "$f"; fail=1; fi
done
[ $fail = 0 ] || { echo "a session failed"; exit 1; }

# every answer equals a solo run's
check() {
  local file=$1 tag=$2; shift 2
  local n=0 line
  while read -r line; do
    case "$line" in
      "$tag "*)
        n=$((n + 1))
        local ok=0 want
        for want in "$@"; do [ "$line" = "$want" ] && ok=1; done
        [ $ok = 1 ] || { echo "$(basename "$file"): $line is no solo answer (${*})"; exit 1; }
        ;;
    esac
  done <"$file"
  [ $n -gt 0 ] || { echo "$(basename "$file"): no $tag"; exit 1; }
  echo "$(basename "$file" .out): $n x $tag as solo"
}
check "$out/owner.out" commit_a "commit_a ${s_mine_a#mine_a }"
check "$out/owner.out" commit_b "commit_b ${s_mine_b#mine_b }"
check "$out/editor.out" commit_a "commit_a ${s_mine_a#mine_a }"
check "$out/editor.out" commit_b "commit_b ${s_mine_b#mine_b }"
for s in owner reader reader2 reader3; do check "$out/$s.out" pred_sib "$s_pred_a" "$s_pred_b"; done
check "$out/reader.out" mine_a "$s_mine_a"
check "$out/reader3.out" mine_b "$s_mine_b"
check "$out/reader2.out" pred_call "$s_pred_call"
echo "predictions with set A: $(cat "$out"/*.out | grep -cx "$s_pred_a"), with set B: $(cat "$out"/*.out | grep -cx "$s_pred_b")"

# the stored rules are one commit's: one set's rows, one transaction, one role
final=$(solo "$stored")
[ "$final" = "$s_stored_a" ] || [ "$final" = "$s_stored_b" ] \
  || { echo "gpudl.mined_rules is a mix of commits"; solo "SELECT mined_by, mined_at, count(*) FROM gpudl.mined_rules GROUP BY 1, 2"; exit 1; }
[ "$(solo "SELECT count(DISTINCT (mined_by, mined_at)) FROM gpudl.mined_rules WHERE program = 'fam'")" = 1 ] \
  || { echo "the stored rules come from several commits"; exit 1; }
# and a prediction now gives the solo answer of that set
now=$(solo "SET ROLE kgs_reader; $pred_sib")
{ [ "$final" = "$s_stored_a" ] && [ "$now" = "$s_pred_a" ]; } || { [ "$final" = "$s_stored_b" ] && [ "$now" = "$s_pred_b" ]; } \
  || { echo "the final prediction is not the stored set's"; exit 1; }

[ -n "${GDL_KEEP:-}" ] || rm -rf "$out"
dropdb $db
psql -X -q -d postgres -c "DROP ROLE kgs_owner" -c "DROP ROLE kgs_editor" -c "DROP ROLE kgs_reader" -c "DROP ROLE kgs_reader2"
echo "mining and prediction in 5 concurrent sessions ($rounds rounds): ok"
