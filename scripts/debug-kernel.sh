#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build (once) the debug kernel used for KUnit and the sanitizer runs, from
# Debian's linux-source-6.1, cached outside the work tree and keyed by the
# config fragment, this script and the source package version.
#
# Prints the cache directory on stdout when done:
#   $dir/bzImage, $dir/build (for M= builds), $dir/mods/lib/modules/<rel>
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${SROCE_CACHE:-/var/cache/sroce}
frag=$here/kconfig/debug.config
srcpkg=linux-source-6.1
tarball=/usr/src/linux-source-6.1.tar.xz

ver=$(dpkg-query -W -f='${Version}' "$srcpkg")
key=$(cat "$frag" "$0" | sha256sum | cut -c1-12)
dir=$cache/debug-kernel-$ver-$key
if [ -f "$dir/done" ]; then
	echo "$dir"
	exit 0
fi

log() { echo "debug-kernel: $*" >&2; }
mkdir -p "$dir"
exec 9>"$dir.lock"
flock 9
if [ -f "$dir/done" ]; then
	echo "$dir"
	exit 0
fi
start=$(date +%s)
if [ ! -f "$dir/src/Makefile" ]; then
	log "unpacking $tarball"
	rm -rf "$dir/src" && mkdir -p "$dir/src"
	tar -xf "$tarball" -C "$dir/src" --strip-components=1
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
	   INFINIBAND_USER_ACCESS DEBUG_ATOMIC_SLEEP 9P_FS NET_9P_VIRTIO; do
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
