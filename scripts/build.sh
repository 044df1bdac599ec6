#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build sroce in build/<kernel>/ for one target kernel, keeping the work tree
# free of objects from either:
#   scripts/build.sh debian   Debian's 6.1 headers -> sroce.ko
#   scripts/build.sh debug    the debug kernel     -> sroce.ko, sroce_kunit.ko
# Extra arguments go to make (e.g. C=2 for sparse). Fails on any compiler or
# sparse warning (W=1 always).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
target=${1:?usage: build.sh debian|debug [make args]}
shift

case $target in
debian)
	kver=$(ls -d /lib/modules/*/build 2>/dev/null | sort -V | tail -n1 | cut -d/ -f4)
	kdir=/lib/modules/$kver/build
	;;
debug)
	kdir=$("$here/debug-kernel.sh")/build
	;;
*)
	echo "build.sh: unknown target $target" >&2
	exit 2
	;;
esac

out=$top/build/$target
mkdir -p "$out"
# cp -a keeps source mtimes, so make rebuilds only what changed.
(cd "$top" && cp -a Kbuild drivers include "$out/")
log=$out/build.log
if ! make -C "$kdir" M="$out" W=1 "$@" modules >"$log" 2>&1; then
	cat "$log"
	exit 1
fi
if grep -E '(warning|error):' "$log"; then
	echo "build.sh: warnings in $target build (see $log)"
	exit 1
fi
ls "$out"/*.ko
