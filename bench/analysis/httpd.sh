#!/usr/bin/env bash
# bench/analysis/httpd.sh — the facts of Apache httpd, the code base of
# Graspan's published CSPA input, from Debian's own source package: fetches
# apache2's source (apt-get source; deb-src must be enabled), configures it
# (for ap_config_auto.h and test_char.h), then runs run.sh over server/,
# modules/ and os/unix/ with httpd's include directories.  Files that need
# what Debian's build would add (nghttp2, lua, Windows headers) are counted
# as failures by run.sh and left out.
#
#   bash bench/analysis/httpd.sh                 # facts in $WORK/facts
#   SSA=1 CLONE=50 bash bench/analysis/httpd.sh  # run.sh's front-end choices
#
# Settings: SRC (where the source goes, default /tmp/gpudl-httpd-src), WORK
# (default /tmp/gpudl-analysis-httpd), PKG (default apache2/bookworm); the
# rest as run.sh.  Needs libapr1-dev libaprutil1-dev libpcre2-dev clang-14.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
SRC="${SRC:-/tmp/gpudl-httpd-src}"
export WORK="${WORK:-/tmp/gpudl-analysis-httpd}"
PKG="${PKG:-apache2/bookworm}"
mkdir -p "$SRC"
cd "$SRC"
tree=$(find . -maxdepth 1 -type d -name 'httpd-*' | head -1)
if [ -z "$tree" ]; then
  apt-get source -q --download-only "$PKG" >/dev/null
  tar xzf apache2_*.orig.tar.gz
  tree=$(find . -maxdepth 1 -type d -name 'httpd-*' | head -1)
fi
cd "$tree"
echo "== $(basename "$PWD") in $SRC"
[ -f include/ap_config_auto.h ] ||
  ./configure --with-apr=/usr/bin/apr-1-config --with-apr-util=/usr/bin/apu-1-config >configure.log 2>&1
flags="-Iinclude -Ios/unix -Iserver/mpm/event -Iserver $(find modules -name '*.h' -printf '-I%h\n' | sort -u | tr '\n' ' ')"
flags="$flags $(apr-1-config --includes) $(apu-1-config --includes) -DLINUX -D_REENTRANT -D_GNU_SOURCE"
if [ ! -f server/test_char.h ]; then
  cc $flags -o gen_test_char server/gen_test_char.c
  ./gen_test_char >server/test_char.h
fi
CFLAGS="$flags" bash "$here/run.sh" server modules os/unix
