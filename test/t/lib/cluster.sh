# test/t/lib/cluster.sh — for the tests that reconfigure the private cluster
# with ALTER SYSTEM and restart it (sourced, not a test): keep its
# postgresql.auto.conf before, and put it back and restart at the end, so
# that the next test finds the cluster as it was.
#
#   source test/t/lib/cluster.sh
#   save_autoconf                       # sets autoconf and tmp
#   restore() { kill_jobs; restore_cluster [SQL...]; }; trap restore EXIT

# save_autoconf: set autoconf (the cluster's postgresql.auto.conf) and tmp
# (a new directory for the test's files, open to all when run as root, where
# the server runs as another user), and keep a copy of autoconf in tmp
save_autoconf() {
  autoconf="$PGDATA/postgresql.auto.conf"
  tmp=$(mktemp -d)
  [ "$(id -u)" = 0 ] && chmod 777 "$tmp"
  cp -p "$autoconf" "$tmp/auto.conf.saved"
}

# kill_jobs: signal every background job of this shell (sessions a test
# left running when it stopped early)
kill_jobs() {
  local j
  for j in $(jobs -p); do kill "$j" 2>/dev/null; done
}

# restore_cluster [SQL...]: put back the postgresql.auto.conf save_autoconf
# kept, drop $db and run each SQL (quietly, on postgres: what else the test
# made), restart the cluster (or start it, if it is down) and remove $tmp
restore_cluster() {
  local sql
  cat "$tmp/auto.conf.saved" >"$autoconf"
  for sql in "DROP DATABASE IF EXISTS $db" "$@"; do
    psql -X -q -d postgres -c "$sql" >/dev/null 2>&1
  done
  pg_restart || pg_start
  rm -rf "$tmp"
}
