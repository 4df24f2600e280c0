#!/usr/bin/env bash
# 19_analysis_extract: bench/analysis/extract.py on real clang-14 IR — the
# facts of bench/analysis/testdata/small.c (+ the hand-written select.ll)
# equal the checked-in expected/*.tsv, verified by hand against the C
# source (expected/EDGES.md says which line makes each edge); a few of them
# are also checked here one by one.  Then the reference fixpoint
# (reference.py: hand-coded rules and a generic evaluator of cspa.dl,
# csda.dl, andersen.dl, which must agree) equals expected/derived/*.tsv,
# with hand-checked points-to and alias facts.  Needs no PostgreSQL;
# skipped (exit 0) only when clang-14 is absent.
set -u
root="$(cd "$(dirname "$0")/../.." && pwd)"
a="$root/bench/analysis"
td="$a/testdata"
command -v clang-14 >/dev/null || { echo "skip: clang-14 not found, 19_analysis_extract not run"; exit 0; }
work=$(mktemp -d /tmp/gpudl-analysis-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail=0

# ok/FAIL line for a check named $1 whose command is the rest
check() {
  local name="$1"; shift
  if "$@"; then echo "ok: $name"; else echo "FAIL: $name"; fail=1; fi
}
# whether file $1 has the exact line $2 (tab-separated columns)
has() { grep -qxF -- "$2" "$1"; }
# whether file $1 lacks the exact line $2
lacks() { ! grep -qxF -- "$2" "$1"; }
# whether two files are identical (diff shown when not)
same() { diff -u "$1" "$2" >&2; }

T=$'\t'
if ! clang-14 -S -emit-llvm -O0 -fno-discard-value-names -w "$td/small.c" -o "$work/small.ll"; then
  echo "FAIL: clang-14 does not compile small.c"; exit 1
fi
if ! python3 "$a/extract.py" -o "$work/facts" "$work/small.ll" "$td/select.ll" >/dev/null; then
  echo "FAIL: extract.py failed"; exit 1
fi
for rel in assign dereference addr assgn load store arc nullEdge; do
  check "extracted $rel equals expected/$rel.tsv" same "$td/expected/$rel.tsv" "$work/facts/$rel.tsv"
done
# edges checked one by one (small.c line: edge)
f="$work/facts"
check "line 21 p = &x: store(main:%p, main:%x), addr of the alloca x" \
  eval 'has "$f/store.tsv" "main:%p${T}main:%x" && has "$f/addr.tsv" "main:%x${T}obj:main:%x"'
check "line 22 q = p: the load of p is assign(*main:%p, main:%0) + dereference, not assign(p, q)" \
  eval 'has "$f/assign.tsv" "*main:%p${T}main:%0" && has "$f/dereference.tsv" "main:%p${T}*main:%p" && lacks "$f/assign.tsv" "main:%p${T}main:%q"'
check "line 24 s.f: GEP is a copy of its base (assign(main:%s, main:%f), assgn(main:%f, main:%s))" \
  eval 'has "$f/assign.tsv" "main:%s${T}main:%f" && has "$f/assgn.tsv" "main:%f${T}main:%s"'
check "line 27 ?: phi copies both arms" \
  eval 'has "$f/assign.tsv" "main:%4${T}main:%cond" && has "$f/assign.tsv" "main:%5${T}main:%cond"'
check "line 28 pass(r): argument to parameter, return to result" \
  eval 'has "$f/assign.tsv" "main:%6${T}pass:%a" && has "$f/assign.tsv" "pass:%0${T}main:%call"'
check "line 29 n = NULL: nullEdge into *main:%n; line 32 pass(NULL): into pass:%a" \
  eval 'has "$f/nullEdge.tsv" "main:null#1${T}*main:%n" && has "$f/nullEdge.tsv" "main:null#2${T}pass:%a"'
check "line 12 gp = &g: the initializer stores @g into *@gp" \
  eval 'has "$f/store.tsv" "@gp${T}@g" && has "$f/assign.tsv" "@g${T}*@gp"'
check "select.ll: select copies pointer arms, constant bitcast of @h reaches the static select.ll/keep:%o" \
  eval 'has "$f/assign.tsv" "pick:%u${T}pick:%w" && has "$f/assign.tsv" "pick:%w${T}pick:%k" && has "$f/assgn.tsv" "select.ll/keep:%o${T}@h"'
check "extract.py output is deterministic (second run identical)" \
  eval 'python3 "$a/extract.py" -o "$work/facts2" "$td/select.ll" "$work/small.ll" >/dev/null && diff -r "$work/facts" "$work/facts2" >&2'

# the reference fixpoint: hand-coded rules = the .dl files = expected derived tuples
if python3 "$a/reference.py" "$work/facts" "$work/derived"; then :; else fail=1; fi
for rel in pt valueFlow memoryAlias valueAlias null; do
  check "reference $rel equals expected/derived/$rel.tsv" same "$td/expected/derived/$rel.tsv" "$work/derived/$rel.tsv"
done
d="$work/derived"
check "Andersen: *s.f (main:%11) points to x and g (line 26 *pp = &g makes p point to g)" \
  eval '[ "$(grep -P "^main:%11\t" "$d/pt.tsv" | cut -f2 | tr "\n" " ")" = "obj:@g obj:main:%x " ]'
check "Andersen: keep(bitcast @h) gives pick:%z -> obj:@h only" \
  eval '[ "$(grep -P "^pick:%z\t" "$d/pt.tsv" | cut -f2)" = "obj:@h" ]'
check "CSPA: the two loads of p value-alias, p and msg loads do not" \
  eval 'has "$d/valueAlias.tsv" "main:%0${T}main:%4" && lacks "$d/valueAlias.tsv" "main:%0${T}main:%16"'
check "CSPA: *f and *f2 (the same field s.f) memory-alias; q's value flows to the load of s.f" \
  eval 'has "$d/memoryAlias.tsv" "*main:%f${T}*main:%f2" && has "$d/valueFlow.tsv" "main:%1${T}main:%11"'
check "CSDA: NULL of line 29 reaches the comparison n != 0; NULL of line 32 reaches t (context-insensitive)" \
  eval 'has "$d/null.tsv" "main:null#1${T}main:%cmp" && has "$d/null.tsv" "main:null#2${T}main:%9"'

# context sensitivity by cloning (--clone N): each call of pass() gets its own copy
python3 "$a/extract.py" --clone 100 -o "$work/cloned" "$work/small.ll" "$td/select.ll" >/dev/null || fail=1
c="$work/cloned"
check "--clone: line 28 pass(r) links r to copy /main#0 of pass, whose return reaches t only" \
  eval 'has "$c/assign.tsv" "main:%6${T}pass:%a@/main#0" && has "$c/assign.tsv" "pass:%0@/main#0${T}main:%call" && lacks "$c/assign.tsv" "pass:%0@/main#0${T}main:%call1"'
check "--clone: line 32 pass(NULL) has copy /main#1 (its local memory *pass:%a.addr@/main#1 too), the shared copy stays" \
  eval 'has "$c/nullEdge.tsv" "main:null#2${T}pass:%a@/main#1" && has "$c/assign.tsv" "pass:%a@/main#1${T}*pass:%a.addr@/main#1" && has "$c/assign.tsv" "pass:%a${T}*pass:%a.addr"'
check "--clone: facts outside calls are unchanged (dereference of main's locals, the global initializer)" \
  eval 'has "$c/dereference.tsv" "main:%p${T}*main:%p" && has "$c/assign.tsv" "@g${T}*@gp"'
if python3 "$a/reference.py" "$c" "$work/cderived" >/dev/null; then :; else fail=1; fi
check "--clone: CSDA: NULL of line 32 no longer reaches t (context-sensitive), only the second call's result" \
  eval 'lacks "$work/cderived/null.tsv" "main:null#2${T}main:%9" && has "$work/cderived/null.tsv" "main:null#2${T}main:%call1" && has "$work/cderived/null.tsv" "main:null#1${T}main:%cmp"'
check "--clone 0 is the context-insensitive extraction" \
  eval 'python3 "$a/extract.py" --clone 0 -o "$work/facts0" "$work/small.ll" "$td/select.ll" >/dev/null && diff -r "$work/facts" "$work/facts0" >&2'
[ $fail = 0 ] && echo "analysis extract: facts and reference fixpoint as expected" || echo "FAIL: 19_analysis_extract"
exit $fail
