# tools/pgenv.sh — the private PostgreSQL 15 cluster of a checkout.
# Sourced by tools/demo.sh and tools/test.sh.  The cluster lives in .pgdata/,
# listens only on a Unix socket, and runs as the invoking user — or as the
# "postgres" user when invoked as root, since PostgreSQL refuses to run as root.
set -euo pipefail
GPUDL_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PGBIN="$(pg_config --bindir 2>/dev/null || echo /usr/lib/postgresql/15/bin)"
export PATH="$PGBIN:$PATH"
export PGDATA="$GPUDL_ROOT/.pgdata"
export PGHOST="${GPUDL_PGHOST:-/tmp}"
export PGPORT="${GPUDL_PGPORT:-54329}"
export PGUSER="${GPUDL_PGUSER:-postgres}"
export PGDATABASE="${PGDATABASE:-gpudl}"

# Run a command as the server's user.
as_server_user() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# Create (if needed) and start the private cluster; idempotent.
pg_start() {
  if [ ! -f "$PGDATA/PG_VERSION" ]; then
    mkdir -p "$PGDATA"
    [ "$(id -u)" = 0 ] && chown postgres "$PGDATA"
    as_server_user initdb -D "$PGDATA" -A trust -U postgres >"$GPUDL_ROOT/.pgdata.initdb.log" 2>&1 \
      || { cat "$GPUDL_ROOT/.pgdata.initdb.log"; return 1; }
    {
      echo "listen_addresses = ''"
      echo "unix_socket_directories = '$PGHOST'"
      echo "port = $PGPORT"
      echo "max_connections = 40"
      echo "shared_buffers = 256MB"
      echo "work_mem = 64MB"
      if [ -f "$(pg_config --pkglibdir)/pg_cron.so" ]; then
        echo "shared_preload_libraries = 'pg_cron,gpudl'"   # gpudl: the GPU service and cluster-wide admission
        echo "cron.database_name = 'gpudl'"
        echo "cron.use_background_workers = on"   # no TCP: the cluster listens on a socket only
        echo "max_worker_processes = 16"
      else
        echo "shared_preload_libraries = 'gpudl'"
      fi
    } >>"$PGDATA/postgresql.conf"
  fi
  if ! as_server_user pg_ctl -D "$PGDATA" status >/dev/null 2>&1; then
    as_server_user pg_ctl -D "$PGDATA" -l "$PGDATA/server.log" -w start >/dev/null \
      || { tail -30 "$PGDATA/server.log"; return 1; }
  fi
  psql -d postgres -Atqc "SELECT 1 FROM pg_database WHERE datname = '$PGDATABASE'" | grep -q 1 \
    || createdb "$PGDATABASE"
}

# Restart the private cluster (for tests that need a fresh server process).
pg_restart() {
  as_server_user pg_ctl -D "$PGDATA" -l "$PGDATA/server.log" -w restart >/dev/null
}

# Stop the private cluster if it runs.
pg_stop() {
  as_server_user pg_ctl -D "$PGDATA" -w stop >/dev/null 2>&1 || true
}

# Build and install the extension (sudo when the PostgreSQL tree is not writable).
gpudl_build_install() {
  make -C "$GPUDL_ROOT" -s -j2
  if [ -w "$(pg_config --pkglibdir)" ]; then
    make -C "$GPUDL_ROOT" -s install
  else
    sudo make -C "$GPUDL_ROOT" -s install
  fi
}
