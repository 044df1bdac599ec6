#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the kernel's soft-iWARP driver (siw) out of tree for one kernel of
# the matrix, as the bench's third driver: Debian sets no CONFIG_RDMA_SIW
# in 6.1, 6.12 or 7.2, while Fedora, RHEL and Ubuntu ship it.
#   scripts/siw.sh 6.1|6.12|7.2   -> build/siw-KERNEL/siw.ko (printed)
# The source is drivers/infiniband/sw/siw of the kernel's own Debian
# source package (linux-source-6.1 on the host; linux-source-6.12 and
# -7.2 of trixie and sid through scripts/suite-apt.sh), cached under
# /var/cache/sroce; it is built with M= against the kernel's headers,
# with the compiler that built the kernel (build.sh's chroot for 6.12 and
# 7.2). Not sroce's code: its warnings do not fail the build.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
cache=${SROCE_CACHE:-/var/cache/sroce}
target=${1:?usage: siw.sh 6.1|6.12|7.2}

log() { echo "siw.sh($target): $*" >&2; }

chroot=
case $target in
6.1)
	kver=$(ls -d /lib/modules/*/build 2>/dev/null | sort -V | tail -n1 | cut -d/ -f4)
	kdir=/lib/modules/$kver/build
	ver=$(dpkg-query -W -f='${Version}' linux-source-6.1)
	tarball=/usr/src/linux-source-6.1.tar.xz
	;;
6.12 | 7.2)
	kernel=$("$here/kernel.sh" "$target")
	chroot=$kernel/chroot
	kver=$(cat "$kernel/release")
	kdir=/usr/src/linux-headers-$kver
	suite=$(cat "$kernel/suite")
	tarball=
	;;
*)
	echo "siw.sh: unknown kernel $target" >&2
	exit 2
	;;
esac

# The siw sources of the kernel's series, once per source version.
if [ -z "$tarball" ]; then
	# shellcheck source=scripts/suite-apt.sh
	. "$here/suite-apt.sh"
	# A warm cache needs no network.
	ver=''
	for d in "$cache"/siw-src-"$target".*; do
		[ ! -f "$d/done" ] || ver=${d##*/siw-src-"$target".}
	done
	if [ -z "$ver" ]; then
		suite_apt_update "$suite"
		ver=$(suite_apt_candidate "$suite" "linux-source-$target")
		[ -n "$ver" ] || { log "no linux-source-$target in $suite"; exit 1; }
	fi
	[[ $ver == "${kver%%+*}"* ]] ||
		log "note: siw from linux-source $ver, the kernel is $kver"
fi
src=$cache/siw-src-$target.$ver
if [ ! -f "$src/done" ]; then
	mkdir -p "$cache"
	exec 9>"$src.lock"
	flock 9
fi
if [ ! -f "$src/done" ]; then
	rm -rf "$src" && mkdir -p "$src"
	if [ -z "$tarball" ]; then
		log "downloading linux-source-$target $ver from $suite"
		(cd "$src" && suite_apt_get "$suite" download "linux-source-$target=$ver")
		tarball=$src/linux-source-$target.tar.xz
		dpkg-deb --fsys-tarfile "$src"/linux-source-"$target"_*.deb |
			tar -xO "./usr/src/linux-source-$target.tar.xz" >"$tarball"
		rm -f "$src"/*.deb
	fi
	log "unpacking drivers/infiniband/sw/siw of $ver"
	tar -xJf "$tarball" -C "$src" --strip-components=5 --wildcards \
		'*/drivers/infiniband/sw/siw/*'
	[ "$tarball" != "$src/linux-source-$target.tar.xz" ] || rm -f "$tarball"
	[ -f "$src/siw_main.c" ] || { log "no siw_main.c in $ver"; exit 1; }
	touch "$src/done"
fi

out=$top/build/siw-$target
rm -rf "$out"
mkdir -p "$out"
cp -a "$src"/*.[ch] "$src"/Makefile "$out/"
log=$out/build.log
if [ -z "$chroot" ]; then
	make -j"$(nproc)" -C "$kdir" M="$out" CONFIG_RDMA_SIW=m modules >"$log" 2>&1 ||
		{ cat "$log"; exit 1; }
else
	unshare -m sh -c 'mount --bind "$1" "$2/mnt/build" && mount -t proc proc "$2/proc" &&
		shift 2 && exec chroot "$0" "$@"' \
		"$chroot" "$out" "$chroot" make -j"$(nproc)" -C "$kdir" \
		M=/mnt/build CONFIG_RDMA_SIW=m modules >"$log" 2>&1 ||
		{ cat "$log"; exit 1; }
fi
# The guest loads it with insmod after its dependencies (lib.sh).
[ "$(modinfo -F vermagic "$out/siw.ko" | cut -d' ' -f1)" = "$kver" ] ||
	{ log "siw.ko is not for $kver"; exit 1; }
echo "$out/siw.ko"
