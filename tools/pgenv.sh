# tools/pgenv.sh — the private PostgreSQL 15 cluster of a checkout.
# Sourced by tools/demo.sh and tools/test.sh.  The cluster lives in .pgdata/,
# listens only on a Unix socket, preloads gpudl (and pg_cron when installed),
# and runs as the invoking user — or as the "postgres" user when invoked as
# root, since PostgreSQL refuses to run as root.  When postgres cannot enter
# the checkout (root's clone in a mode-700 home), the data directory goes to
# /var/tmp/gpudl-<hash of the checkout path>/pgdata instead.
set -euo pipefail
GPUDL_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# PostgreSQL 15's tools: pg_config on the PATH when it is 15, else Debian's place.
if ! pg_config --version 2>/dev/null | grep -q '^PostgreSQL 15' \
   && [ -x /usr/lib/postgresql/15/bin/pg_config ]; then
  export PATH="/usr/lib/postgresql/15/bin:$PATH"
fi
PGBIN="$(pg_config --bindir 2>/dev/null || echo /usr/lib/postgresql/15/bin)"
export PATH="$PGBIN:$PATH"
# GPUDL_PRELOAD=no: a second cluster (.pgdata-nopreload/, port 54330) with no
# shared_preload_libraries at all, as a DBA's existing cluster may be.
export GPUDL_PRELOAD="${GPUDL_PRELOAD:-yes}"
export PGHOST="${GPUDL_PGHOST:-/tmp}"
if [ "$GPUDL_PRELOAD" = no ]; then
  export PGPORT="${GPUDL_PGPORT:-54330}"
else
  export PGPORT="${GPUDL_PGPORT:-54329}"
fi
export PGUSER="${GPUDL_PGUSER:-postgres}"
export PGDATABASE="${PGDATABASE:-gpudl}"

# Run a command as the server's user.
as_server_user() {
  if [ "$(id -u)" = 0 ]; then runuser -u "${GPUDL_SERVER_USER:-postgres}" -- "$@"; else "$@"; fi
}

# The data directory: .pgdata/ in the checkout, unless the server's user
# cannot reach it (root's checkout in a directory only root may enter).
gpudl_pgdata() {
  local name=pgdata
  [ "$GPUDL_PRELOAD" = no ] && name=pgdata-nopreload
  if [ -n "${GPUDL_PGDATA:-}" ]; then echo "$GPUDL_PGDATA"; return; fi
  if [ "$(id -u)" = 0 ] && id postgres >/dev/null 2>&1 \
     && ! runuser -u postgres -- test -x "$GPUDL_ROOT" 2>/dev/null; then
    echo "/var/tmp/gpudl-$(printf %s "$GPUDL_ROOT" | md5sum | cut -c1-12)/$name"
  else
    echo "$GPUDL_ROOT/.$name"
  fi
}
export PGDATA="$(gpudl_pgdata)"

# Check what building and testing need; print exactly what to install.
# Argument: "build" (the extension) or "test" (also pgTAP and pg_cron).
gpudl_check_prereqs() {
  local what=${1:-build} missing=() pkgs=()
  if ! pg_config --version 2>/dev/null | grep -q '^PostgreSQL 15'; then
    missing+=("pg_config of PostgreSQL 15 (found: $(pg_config --version 2>/dev/null || echo none))")
    pkgs+=(postgresql-15 postgresql-server-dev-15)
  else
    [ -x "$PGBIN/initdb" ] || { missing+=("the server ($PGBIN/initdb)"); pkgs+=(postgresql-15); }
    [ -f "$(pg_config --includedir-server)/postgres.h" ] \
      || { missing+=("server headers ($(pg_config --includedir-server)/postgres.h)"); pkgs+=(postgresql-server-dev-15); }
    if [ "$what" = test ]; then
      [ -f "$(pg_config --sharedir)/extension/pgtap.control" ] \
        || { missing+=("pgTAP ($(pg_config --sharedir)/extension/pgtap.control)"); pkgs+=(postgresql-15-pgtap); }
      [ -f "$(pg_config --pkglibdir)/pg_cron.so" ] \
        || { missing+=("pg_cron ($(pg_config --pkglibdir)/pg_cron.so)"); pkgs+=(postgresql-15-cron); }
    fi
  fi
  command -v make >/dev/null || { missing+=("make"); pkgs+=(make); }
  command -v "${CC:-gcc}" >/dev/null || { missing+=("a C compiler (${CC:-gcc})"); pkgs+=(gcc); }
  if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
    missing+=("the postgres user (run as root, the server runs as postgres)"); pkgs+=(postgresql-15)
  fi
  if [ "$(id -u)" != 0 ] && [ ! -w "$(pg_config --pkglibdir 2>/dev/null || echo /)" ] \
     && ! command -v sudo >/dev/null; then
    missing+=("sudo (make install writes into PostgreSQL's directories)"); pkgs+=(sudo)
  fi
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "gpudl: missing prerequisites:" >&2
  printf '  - %s\n' "${missing[@]}" >&2
  echo "On Debian 12 install them with (PostgreSQL 15 is Debian 12's own):" >&2
  echo "  sudo apt-get install $(printf '%s\n' "${pkgs[@]}" | sort -u | paste -sd' ')" >&2
  return 1
}

# Create (if needed) and start the private cluster; idempotent.
pg_start() {
  if [ ! -f "$PGDATA/PG_VERSION" ]; then
    if [ "$(dirname "$PGDATA")" != "$GPUDL_ROOT" ] && [ -z "${GPUDL_PGDATA:-}" ]; then
      echo "note: the postgres user cannot enter $GPUDL_ROOT;" \
           "the cluster's data directory is $PGDATA" >&2
      mkdir -p "$(dirname "$PGDATA")"
      chown postgres "$(dirname "$PGDATA")"; chmod 700 "$(dirname "$PGDATA")"
    fi
    mkdir -p "$PGDATA"
    [ "$(id -u)" = 0 ] && chown postgres "$PGDATA"
    chmod 700 "$PGDATA"
    as_server_user initdb -D "$PGDATA" -A trust -U postgres >"$GPUDL_ROOT/.pgdata.initdb.log" 2>&1 \
      || { cat "$GPUDL_ROOT/.pgdata.initdb.log"; return 1; }
    {
      echo "listen_addresses = ''"
      echo "unix_socket_directories = '$PGHOST'"
      echo "port = $PGPORT"
      echo "max_connections = 40"
      echo "shared_buffers = 256MB"
      echo "work_mem = 64MB"
      echo "max_worker_processes = 16"
      # gpudl's shared memory (gpudl_progress across sessions) needs preloading
      if [ "$GPUDL_PRELOAD" = no ]; then
        echo "# no shared_preload_libraries: gpudl loads per session"
      elif [ -f "$(pg_config --pkglibdir)/pg_cron.so" ]; then
        echo "shared_preload_libraries = 'pg_cron,gpudl'"
        echo "cron.database_name = 'gpudl'"
        echo "cron.use_background_workers = on"   # no TCP: the cluster listens on a socket only
      else
        echo "shared_preload_libraries = 'gpudl'"
      fi
    } >>"$PGDATA/postgresql.conf"
  fi
  # a cluster made before gpudl was preloaded: preload it from now on
  if [ "$GPUDL_PRELOAD" != no ] \
     && ! grep -q "^shared_preload_libraries = .*gpudl" "$PGDATA/postgresql.conf"; then
    if [ -f "$(pg_config --pkglibdir)/pg_cron.so" ]; then
      echo "shared_preload_libraries = 'pg_cron,gpudl'" >>"$PGDATA/postgresql.conf"
    else
      echo "shared_preload_libraries = 'gpudl'" >>"$PGDATA/postgresql.conf"
    fi
    pg_stop
  fi
  # a preloaded library is the postmaster's copy: restart after an install
  if [ -f "$PGDATA/postmaster.pid" ] \
     && [ "$(pg_config --pkglibdir)/gpudl.so" -nt "$PGDATA/postmaster.pid" ]; then
    pg_stop
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
  gpudl_check_prereqs build
  make -C "$GPUDL_ROOT" -s -j2
  if [ -w "$(pg_config --pkglibdir)" ]; then
    make -C "$GPUDL_ROOT" -s install
  else
    sudo make -C "$GPUDL_ROOT" -s install
  fi
}
