#!/usr/bin/env bash
# test/ilp/run_tasks.sh — build the ILP task-suite runner and run it over
# shared/data/ilp/tasks (or TASKS_DIR); extra arguments go to the runner
# (e.g. -n 5 for median times, -v for rule measures, a task name to run one).
# Exit status 0 when every task is learned exactly except at most one.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
make -s -C "$here" bin/run_tasks
dir="${TASKS_DIR:-$(cd "$here/../.." && pwd)/../shared/data/ilp/tasks}"
[ -d "$dir" ] || dir=/work/shared/data/ilp/tasks
exec "$here/bin/run_tasks" -d "$dir" "$@"
