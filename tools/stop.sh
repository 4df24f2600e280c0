#!/usr/bin/env bash
# tools/stop.sh — stop this checkout's private PostgreSQL cluster.
source "$(dirname "$0")/pgenv.sh"
pg_stop
