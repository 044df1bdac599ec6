#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build (once) the debug kernel used for KUnit and the sanitizer runs, from
# the newest kernel source Debian ships (sid's linux-source-7.2, fetched
# through scripts/suite-apt.sh), cached outside the work tree and keyed by
# the config fragment, this script and the source package version. Built
# with the host's gcc, like the sroce module built against it (build.sh
# debug): a module and its kernel must share one compiler.
#
# Prints the cache directory on stdout when done:
#   $dir/bzImage, $dir/build (for M= builds), $dir/mods/lib/modules/<rel>
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${SROCE_CACHE:-/var/cache/sroce}
frag=$here/kconfig/debug.config
series=7.2
suite=sid
srcpkg=linux-source-$series
key=$(cat "$frag" "$0" | sha256sum | cut -c1-12)

# A finished build for this fragment and script is reused without asking
# the registry: a warm cache needs no network.
for d in "$cache"/debug-kernel-"$series".*-"$key"; do
	if [ -f "$d/done" ]; then
		echo "$d"
		exit 0
	fi
done
# shellcheck source=scripts/suite-apt.sh
. "$here/suite-apt.sh"
suite_apt_update "$suite"
ver=$(suite_apt_candidate "$suite" "$srcpkg")
[ -n "$ver" ] || { echo "debug-kernel: no $srcpkg in $suite" >&2; exit 1; }
dir=$cache/debug-kernel-$ver-$key

log() { echo "debug-kernel: $*" >&2; }
mkdir -p "$dir"
exec 9>"$dir.lock"
flock 9
if [ -f "$dir/done" ]; then
	echo "$dir"
	exit 0
fi
start=$(date +%s)
# A build of the same source for another fragment or script: share its
# source tree (a symlink: make resolves it, so every command line stays
# the same) and start from a copy of its objects, so that make rebuilds
# only what the new config changes (minutes instead of about 21 cold;
# Kbuild tracks each object's config dependencies). The old build stays
# as it was.
if [ ! -e "$dir/src" ]; then
	for old in "$cache"/debug-kernel-"$ver"-*; do
		[ "$old" != "$dir" ] && [ -f "$old/done" ] && [ ! -L "$old/src" ] || continue
		log "starting from $(basename "$old")'s source and objects"
		ln -s "$old/src" "$dir/src"
		rm -rf "$dir/build"
		cp -a "$old/build" "$dir/build"
		break
	done
fi
if [ ! -f "$dir/src/Makefile" ]; then
	log "fetching $srcpkg $ver from $suite"
	rm -rf "$dir/deb" "$dir/src" && mkdir -p "$dir/deb" "$dir/src"
	(cd "$dir/deb" && suite_apt_get "$suite" download "$srcpkg=$ver")
	dpkg-deb --fsys-tarfile "$dir/deb"/"$srcpkg"_*.deb |
		tar -xO --wildcards "./usr/src/$srcpkg.tar.xz" |
		tar -xJ -C "$dir/src" --strip-components=1
	rm -rf "$dir/deb"
fi
mkdir -p "$dir/build"
src=$dir/src
b=$dir/build
jobs=$(($(nproc) + 1))
log "configuring (x86_64_defconfig + kvm_guest.config + $(basename "$frag"))"
make -s -C "$src" O="$b" x86_64_defconfig >&2
"$src/scripts/kconfig/merge_config.sh" -m -O "$b" "$b/.config" \
	"$src/kernel/configs/kvm_guest.config" "$frag" >/dev/null
make -s -C "$src" O="$b" olddefconfig >&2
# Fail loudly if Kconfig dropped something the tests depend on.
for opt in KUNIT KASAN PROVE_LOCKING DEBUG_KMEMLEAK UBSAN INFINIBAND \
	   INFINIBAND_USER_ACCESS DEBUG_ATOMIC_SLEEP 9P_FS NET_9P_VIRTIO \
	   FAILSLAB FAIL_PAGE_ALLOC FAULT_INJECTION_STACKTRACE_FILTER \
	   SOFTLOCKUP_DETECTOR; do
	grep -q "^CONFIG_$opt=y" "$b/.config" || { log "CONFIG_$opt missing"; exit 1; }
done
total=$(find "$src" -name '*.c' | wc -l)
log "building with -j$jobs; progress every 250 objects (tree has $total .c files, a fraction is built)"
make -C "$src" O="$b" -j"$jobs" bzImage modules 2>&1 |
	awk -v t0="$start" '/^  CC /{n++; if (n % 250 == 0) { printf "debug-kernel: %d objects, %d s\n", n, systime() - t0 > "/dev/stderr"; fflush() } }
		/error:|Error [0-9]/{ print > "/dev/stderr" }'
[ "${PIPESTATUS[0]}" -eq 0 ] || { log "build failed"; exit 1; }
rm -rf "$dir/mods"
make -s -C "$src" O="$b" INSTALL_MOD_PATH="$dir/mods" modules_install >&2
cp "$b/arch/x86/boot/bzImage" "$dir/bzImage"
make -s -C "$src" O="$b" kernelrelease > "$dir/release"
touch "$dir/done"
log "built $(cat "$dir/release") in $(($(date +%s) - start)) s"
echo "$dir"
