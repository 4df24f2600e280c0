#!/usr/bin/env bash
# tools/demo.sh — build, install and run gpudl on a private PostgreSQL cluster
# in this checkout (.pgdata/), with a small family tree: create a program, look
# at its strata, query it and learn a rule from examples.
#
#   bash tools/demo.sh          # then: psql -h /tmp -p 54329 -U postgres gpudl
source "$(dirname "$0")/pgenv.sh"
gpudl_build_install
pg_start
psql -v ON_ERROR_STOP=1 -X -f "$GPUDL_ROOT/tools/demo.sql"
echo
echo "demo done. The cluster keeps running: psql -h $PGHOST -p $PGPORT -U $PGUSER $PGDATABASE"
echo "stop it with: bash tools/stop.sh"
