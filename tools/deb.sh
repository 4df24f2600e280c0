#!/usr/bin/env bash
# tools/deb.sh — build the Debian package postgresql-15-gpudl (debian/,
# pg_buildext) from this checkout's files, in a copy of the tree so the
# checkout's own build is left alone.  The .deb lands in build/deb/.
#
#   bash tools/deb.sh            (or: make deb)
#
# Needs debhelper, dpkg-dev and postgresql-server-dev-all (apt-get install
# them; .ci/run does); nvcc, when found, adds the CUDA module to the package.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${DEB_OUT:-$root/build/deb}"
version="$(dpkg-parsechangelog -l "$root/debian/changelog" -S Version)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
src="$work/gpudl-${version%-*}"
mkdir -p "$src" "$out"
# the tracked and untracked-but-not-ignored files, as a clean clone would have them
(cd "$root" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) | tar -C "$src" -xf -
export PATH="/usr/lib/postgresql/15/bin:/usr/local/cuda/bin:$PATH"
(cd "$src" && dpkg-checkbuilddeps && dpkg-buildpackage -us -uc -b) >"$out/build.log" 2>&1 \
  || { tail -40 "$out/build.log"; echo "deb: build failed (log: $out/build.log)"; exit 1; }
mv "$work"/*.deb "$out/"
ls "$out"/*.deb
