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
	moddir=/lib/modules/$kver
	;;
debug)
	kernel=$("$here/debug-kernel.sh")
	kdir=$kernel/build
	moddir=$(ls -d "$kernel"/mods/lib/modules/* | head -n1)
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

# The guest's modules.dep and friends with sroce in extra/, made here where
# depmod takes a second: a guest's own depmod -a reads every module over
# 9p under TCG and takes half a minute (tests/guest/lib.sh install_sroce).
rel=$(basename "$moddir")
stage=$out/depmod-stage
rm -rf "$stage"
mkdir -p "$stage/lib/modules"
cp -as "$moddir" "$stage/lib/modules/"
mkdir -p "$stage/lib/modules/$rel/extra"
cp "$out"/*.ko "$stage/lib/modules/$rel/extra/"
if ! depmod -b "$stage" "$rel"; then
	echo "build.sh: depmod for $rel failed"
	exit 1
fi
# Only what depmod wrote: the rest are links into the module tree, which
# the guest may see elsewhere.
rm -rf "$out/modindex"
mkdir "$out/modindex"
find "$stage/lib/modules/$rel" -maxdepth 1 -type f -name 'modules.*' \
	-exec cp {} "$out/modindex/" \;
rm -rf "$stage"
echo "$rel" >"$out/modindex/release"
ls "$out"/*.ko
