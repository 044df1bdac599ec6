#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Fetch (once) one of Debian's prebuilt kernels of a newer suite, the way a
# user runs it, and a chroot of that suite to build modules for it, cached
# under /var/cache/sroce and keyed by this script and the kernel's version:
#   kernel.sh 6.12    trixie (Debian 13)
#   kernel.sh 7.2     sid
# Prints the cache directory on stdout:
#   $dir/bzImage, $dir/release, $dir/suite,
#   $dir/mods/lib/modules/<rel>   the image's modules (depmod run),
#   $dir/chroot                   the suite with its own gcc, sparse, dkms and
#                                 linux-headers-<rel>: build in it with
#                                 make -C /usr/src/linux-headers-<rel>
#
# Why a chroot: a module must be built by the compiler that built the
# kernel. A tree prepared from linux-source with bookworm's gcc 12 builds a
# sroce.ko that trixie's gcc 14 kernel refuses ("Invalid relocation target,
# existing value is nonzero"), and trixie's own kbuild tools need a newer
# glibc than bookworm's. Inside the chroot it is the build a Debian user
# gets from `apt install linux-headers-amd64` (Documentation/testing.rst).
#
# The suite is reached through a private sources list and lists directory
# (scripts/suite-apt.sh); the host's apt configuration and packages are
# never touched.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${SROCE_CACHE:-/var/cache/sroce}
series=${1:?usage: kernel.sh 6.12|7.2}

case $series in
6.12) suite=trixie ;;
7.2) suite=sid ;;
*) echo "kernel.sh: unknown kernel series $series" >&2; exit 2 ;;
esac

log() { echo "kernel.sh($series): $*" >&2; }

# A finished directory for this series and script is reused without asking
# the registry: a warm cache needs no network.
key=$(sha256sum "$0" | cut -c1-12)
for d in "$cache"/kernel-"$series".*-"$key"; do
	if [ -f "$d/done" ]; then
		echo "$d"
		exit 0
	fi
done

mkdir -p "$cache"
exec 9>"$cache/kernel-$series.lock"
flock 9
for d in "$cache"/kernel-"$series".*-"$key"; do
	if [ -f "$d/done" ]; then
		echo "$d"
		exit 0
	fi
done

# shellcheck source=scripts/suite-apt.sh
. "$here/suite-apt.sh"
suite_apt_update "$suite"
# The newest upstream release of the series in the suite, from its headers.
upstream=$(suite_apt_cache "$suite" search --names-only \
	"^linux-headers-${series//./\\.}\\.[0-9]+\\+deb[0-9]+-amd64\$" |
	sed -n 's/^linux-headers-\([0-9.]*\)+.*/\1/p' | sort -V | tail -n1)
[ -n "$upstream" ] || { log "no linux-headers-$series.* in $suite"; exit 1; }
# The ABI name (6.12.117+deb13) from the amd64 headers package of that version.
rel=$(suite_apt_cache "$suite" search --names-only \
	"^linux-headers-${upstream//./\\.}\\+deb[0-9]+-amd64\$" | awk '{ print $1 }' |
	sed 's/^linux-headers-//' | sort -V | tail -n1)
[ -n "$rel" ] || { log "no amd64 headers for $upstream in $suite"; exit 1; }
dir=$cache/kernel-$upstream-$key
rm -rf "$dir"
mkdir -p "$dir/deb"
start=$(date +%s)

# Newer suites split the image: linux-image-* is then a meta package over
# linux-binary-* (vmlinuz), linux-modules-* and linux-base-* (modules.builtin,
# without which modprobe cannot tell a built-in module from a missing one);
# trixie ships one -unsigned.
pkgs=()
if [ -n "$(suite_apt_candidate "$suite" "linux-binary-$rel")" ]; then
	pkgs+=("linux-binary-$rel" "linux-modules-$rel" "linux-base-$rel")
else
	pkgs+=("linux-image-$rel-unsigned")
fi
log "downloading ${pkgs[*]} from $suite"
(cd "$dir/deb" && suite_apt_get "$suite" download "${pkgs[@]}" >&2)

log "unpacking the image and its modules ($rel)"
root=$dir/root
for p in "${pkgs[@]}"; do
	dpkg -x "$dir"/deb/"${p}"_*.deb "$root"
done
vmlinuz=$(find "$root" -name "vmlinuz-$rel" -o -path "*/modules/$rel/vmlinuz" | head -n1)
[ -n "$vmlinuz" ] || { log "no vmlinuz for $rel in the image"; exit 1; }
cp "$vmlinuz" "$dir/bzImage"
moddir=$(find "$root" -type d -path "*/modules/$rel" | head -n1)
mkdir -p "$dir/mods/lib/modules"
mv "$moddir" "$dir/mods/lib/modules/$rel"
rm -f "$dir/mods/lib/modules/$rel/vmlinuz"
depmod -b "$dir/mods" "$rel"
rm -rf "$root" "$dir/deb"

mirror=$(suite_apt_mirror)
log "building a $suite chroot with its compiler and linux-headers-$rel"
# The registry's sid Release file can be past its Valid-Until date (a
# snapshot): apt would refuse it, so that check is off here.
mmdebstrap --variant=minbase --mode=root --quiet \
	--aptopt='APT::Install-Recommends "false"' \
	--aptopt='Acquire::Check-Valid-Until "false"' \
	--include="build-essential,sparse,kmod,dkms,linux-headers-$rel" \
	"$suite" "$dir/chroot" "$mirror" >&2
mkdir -p "$dir/chroot/mnt/build"
[ -f "$dir/chroot/usr/src/linux-headers-$rel/Makefile" ] ||
	{ log "no linux-headers-$rel in the chroot"; exit 1; }
# Newer kbuild asks scripts/checker-valid.sh whether sparse works before a
# C=1/C=2 build, and Debian's headers packages leave it out: without it
# `make C=2` silently checks nothing.
for c in "$dir"/chroot/usr/src/linux-headers-*-common; do
	[ -e "$c/scripts/checker-valid.sh" ] || [ ! -f "$c/Makefile" ] ||
		! grep -q checker-valid "$c/Makefile" || {
		printf '#!/bin/sh\n# Added by sroce: the checker is usable if it runs.\n"$1" --version >/dev/null 2>&1 && echo 1\n' \
			>"$c/scripts/checker-valid.sh"
		chmod +x "$c/scripts/checker-valid.sh"
	}
done
echo "$rel" >"$dir/release"
echo "$suite" >"$dir/suite"
touch "$dir/done"
# Older fetches of this series (another version or script) are not used.
for d in "$cache"/kernel-"$series".*; do
	[ "$d" = "$dir" ] || [ ! -d "$d" ] || rm -rf "$d"
done
log "ready in $(($(date +%s) - start)) s: $dir"
echo "$dir"
