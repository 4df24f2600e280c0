#!/bin/sh
# bench/engine/run.sh — TC and SG on the graphs of shared/data/graphs through
# the standalone engine benchmark; one run at a time (machines are shared).
#
#   bench/engine/run.sh [--repeat N] [--threads N] [--device cpu|gpu] [--cuda-lib lib.so]
#                       [--programs "tc sg"] [--graphs "CA-HepTh ..."]
#
# Prints one line per run (seconds, tuples, iterations, per-phase ms, peak
# memory).  A run is limited by TIMEOUT seconds (default 900) and MEMLIMIT_KB
# of virtual memory (default 16 GB) so that it cannot take the machine down.
set -e
here=$(cd "$(dirname "$0")" && pwd)
data=${GRAPHS_DIR:-$here/../../../shared/data/graphs}
repeat=1
threads=0
device=cpu
cudalib=
programs="tc sg"
graphs="p2p-Gnutella04 CA-HepTh ego-Facebook SF.cedge"
while [ $# -gt 0 ]; do
	case "$1" in
		--repeat) repeat=$2; shift 2 ;;
		--threads) threads=$2; shift 2 ;;
		--device) device=$2; shift 2 ;;
		--cuda-lib) cudalib="--cuda-lib $2"; shift 2 ;;
		--programs) programs=$2; shift 2 ;;
		--graphs) graphs=$2; shift 2 ;;
		*) echo "unknown option $1" >&2; exit 2 ;;
	esac
done
make -s -C "$here" >/dev/null
for p in $programs; do
	for g in $graphs; do
		(
			ulimit -v "${MEMLIMIT_KB:-16000000}"
			timeout "${TIMEOUT:-900}" "$here/bench_engine" --program "$p" --threads "$threads" \
				--repeat "$repeat" --device "$device" $cudalib "$data/$g.txt"
		) || echo "graph=$g.txt program=$p FAILED or timed out"
	done
done
