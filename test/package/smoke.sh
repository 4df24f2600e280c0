#!/usr/bin/env bash
# test/package/smoke.sh — the Debian package on a fresh cluster: install the
# .deb (as root, after removing what `make install` put in the same places,
# so every file that runs comes from the package), check that dpkg owns the
# extension's files, start a new cluster WITHOUT shared_preload_libraries as
# the postgres user, and use the extension there: CREATE EXTENSION, a
# recursive query, a maintained table under a change, DROP EXTENSION.
#
#   sudo bash test/package/smoke.sh build/deb/postgresql-15-gpudl_*.deb
set -euo pipefail
deb="${1:?usage: smoke.sh PACKAGE.deb}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
bin=/usr/lib/postgresql/15/bin
pkglib="$($bin/pg_config --pkglibdir)"
share="$($bin/pg_config --sharedir)/extension"
fail() { echo "package smoke: FAIL: $*"; exit 1; }
# the version the tree makes (gpudl.control) and the update script that reaches it
version="$(sed -n "s/^default_version = '\(.*\)'/\1/p" "$root/gpudl.control")"
latest_update="$(cd "$root/sql" && ls gpudl--*--"$version".sql)"
[ -n "$version" ] && [ -n "$latest_update" ] || fail "no default_version or update script to it in the tree"

rm -f "$pkglib/gpudl.so" "$pkglib/gpudl_cuda.so" "$share"/gpudl.control "$share"/gpudl--*.sql
dpkg -i "$deb" >/dev/null || fail "dpkg -i $deb"
for f in "$pkglib/gpudl.so" "$share/gpudl.control" "$share/gpudl--0.1.sql" "$share/$latest_update"; do
  dpkg -S "$f" >/dev/null 2>&1 || fail "$f is not installed by the package"
done
echo "package installs $(dpkg -L postgresql-15-gpudl | grep -c -E '\.(so|sql|control)$') extension files"

data="$(mktemp -d /tmp/gpudl-pkg.XXXXXX)"; chown postgres "$data"
port=5499
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
as_pg $bin/initdb -D "$data/db" -A trust >/dev/null || fail initdb
as_pg $bin/pg_ctl -D "$data/db" -o "-p $port -k $data" -l "$data/log" -w start >/dev/null || { cat "$data/log"; fail "server start"; }
trap 'as_pg $bin/pg_ctl -D "$data/db" -m fast -w stop >/dev/null 2>&1; rm -rf "$data"' EXIT
q() { as_pg $bin/psql -X -q -At -v ON_ERROR_STOP=1 -h "$data" -p $port -d postgres "$@"; }
got="$(q <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION gpudl;
CREATE TABLE edge(src int, dst int);
INSERT INTO edge VALUES (1, 2), (2, 3), (3, 4);
SELECT gpudl_create_program('smoke', 'tc(X, Y) :- edge(X, Y).  tc(X, Z) :- tc(X, Y), edge(Y, Z).') IS NOT NULL;
SELECT count(*) FROM gpudl_query('smoke', 'tc(X, Y)') AS t(a int, b int);
SELECT gpudl_materialize('smoke', 'tc', 'tc_kept', mode => 'maintain');
INSERT INTO edge VALUES (4, 5);
SELECT count(*) FROM tc_kept;
SELECT extversion FROM pg_extension WHERE extname = 'gpudl';
DROP EXTENSION gpudl CASCADE;
SQL
)" || { tail -20 "$data/log"; fail "SQL"; }
expected="$(printf 't\n6\n6\n10\n%s' "$version")"
[ "$got" = "$expected" ] || fail "unexpected output: $(echo "$got" | tr '\n' ' ') (expected $(echo "$expected" | tr '\n' ' '))"
echo "package smoke: PASS (CREATE EXTENSION from the package on a cluster without shared_preload_libraries)"
