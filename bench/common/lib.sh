# bench/common/lib.sh — what the shell benchmarks share (sourced, not run):
# their settings' defaults, the connection of those that start no server,
# and the database of those that run on this checkout's private cluster.
#
#   here="$(cd "$(dirname "$0")" && pwd)"; source "$here/../common/lib.sh"
#   bench_defaults RUNS=3 DEVICE=auto ...   # the settings, as one table
#   bench_sql_db gpudl_bench_x; bench_fresh_db   # or: bench_connection

# bench_defaults NAME=VALUE...: give each setting NAME that the environment
# leaves unset or empty its default VALUE, as NAME="${NAME:-VALUE}" would
# (an exported NAME stays exported), so that a benchmark lists its settings
# and their defaults in one place
bench_defaults() {
  local kv name
  for kv in "$@"; do
    name=${kv%%=*}
    [ -n "${!name:-}" ] || printf -v "$name" '%s' "${kv#*=}"
  done
}

# bench_connection: reach PostgreSQL as tools/pgenv.sh's cluster is reached,
# through GPUDL_PGHOST / GPUDL_PGPORT / GPUDL_PGUSER, else PGHOST / PGPORT /
# PGUSER, else /tmp, 54329, postgres (for the benchmarks that start nothing)
bench_connection() {
  export PGHOST="${GPUDL_PGHOST:-${PGHOST:-/tmp}}"
  export PGPORT="${GPUDL_PGPORT:-${PGPORT:-54329}}"
  export PGUSER="${GPUDL_PGUSER:-${PGUSER:-postgres}}"
}

# bench_sql_db NAME: the database of a benchmark through SQL: DB is
# BENCH_DB, else NAME; unless PGHOST names a server, the private cluster of
# this checkout (tools/pgenv.sh), started when it is down; defines q, psql
# on DB (quiet, unaligned tuples only, stopping at the first error)
bench_sql_db() {
  if [ -z "${PGHOST:-}" ]; then source "$(dirname "${BASH_SOURCE[0]}")/../../tools/pgenv.sh"; pg_start >/dev/null; fi
  DB="${BENCH_DB:-$1}"
  q() { psql -X -q -At -v ON_ERROR_STOP=1 -d "$DB" "$@"; }
}

# bench_fresh_db [OPTION]: drop DB (with DROP DATABASE's OPTION, e.g.
# "WITH (FORCE)") and create it again, empty, so that no earlier run's
# tables or programs are timed
bench_fresh_db() {
  psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB${1:+ $1}" -c "CREATE DATABASE $DB" >/dev/null
}
