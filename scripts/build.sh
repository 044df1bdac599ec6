#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build sroce in build/<kernel>/ for one target kernel, keeping the work tree
# free of objects from any:
#   scripts/build.sh 6.1      Debian 12's headers (installed)  -> sroce.ko
#   scripts/build.sh 6.12     Debian 13's kernel (kernel.sh)   -> sroce.ko
#   scripts/build.sh 7.2      sid's kernel (kernel.sh)         -> sroce.ko
#   scripts/build.sh debug    the debug kernel                 -> sroce.ko, sroce_kunit.ko
# Extra arguments go to make (e.g. C=2 for sparse). Fails on any compiler or
# sparse warning (W=1 always).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
target=${1:?usage: build.sh 6.1|6.12|7.2|debug [make args]}
shift

chroot=
case $target in
6.1)
	kver=$(ls -d /lib/modules/*/build 2>/dev/null | sort -V | tail -n1 | cut -d/ -f4)
	kdir=/lib/modules/$kver/build
	moddir=/lib/modules/$kver
	;;
debug)
	kernel=$("$here/debug-kernel.sh")
	kdir=$kernel/build
	moddir=$(ls -d "$kernel"/mods/lib/modules/* | head -n1)
	;;
6.12 | 7.2)
	# In the suite's own chroot, with the compiler that built the kernel.
	kernel=$("$here/kernel.sh" "$target")
	chroot=$kernel/chroot
	kdir=/usr/src/linux-headers-$(cat "$kernel/release")
	moddir=$kernel/mods/lib/modules/$(cat "$kernel/release")
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
kmake() {
	if [ -z "$chroot" ]; then
		make -j"$(nproc)" -C "$kdir" M="$out" W=1 "$@" modules
		return
	fi
	# A private mount namespace: the mounts go away with the build
	# (objtool reads /proc).
	unshare -m sh -c 'mount --bind "$1" "$2/mnt/build" && mount -t proc proc "$2/proc" &&
		shift 2 && exec chroot "$0" "$@"' \
		"$chroot" "$out" "$chroot" make -j"$(nproc)" -C "$kdir" M=/mnt/build W=1 "$@" modules
}
if ! kmake "$@" >"$log" 2>&1; then
	cat "$log"
	exit 1
fi
if grep -E '(warning|error):' "$log"; then
	echo "build.sh: warnings in $target build (see $log)"
	exit 1
fi
# A checker that kbuild found unusable is skipped with only a make notice.
if [[ " $* " == *" C="[12]" "* ]] && ! grep -q '^  CHECK ' "$log"; then
	echo "build.sh: $target: C= given but kbuild ran no checker (see $log)"
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
