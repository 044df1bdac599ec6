#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install sroce the way a Debian user with DKMS does, for one of Debian's
# prebuilt kernels: `dpkg -i sroce-dkms_*.deb` (scripts/dkms-deb.sh) in that
# suite's chroot (scripts/kernel.sh) whose /lib/modules is the kernel's own
# module tree. The package's postinst has DKMS build sroce.ko with the
# suite's compiler and headers, install it under updates/dkms and run depmod.
# The chroot and the module tree stay untouched (overlays); what DKMS added
# to /lib/modules is left in OUT/modules for a guest of that kernel
# (tests/guest/dkms.sh), and its logs in OUT.
#   dkms-check.sh 6.12|7.2 OUT
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
series=${1:?usage: dkms-check.sh 6.12|7.2 OUT}
out=${2:?usage: dkms-check.sh 6.12|7.2 OUT}

kernel=$("$here/kernel.sh" "$series")
rel=$(cat "$kernel/release")
rm -rf "$out"
mkdir -p "$out"/{root,up,wk,modup/"$rel",modwk}
out=$(realpath "$out")
deb=$("$here/dkms-deb.sh" "$out")
# DKMS builds for every /lib/modules/*/build: the headers package's link.
ln -s "/usr/src/linux-headers-$rel" "$out/modup/$rel/build"

# shellcheck disable=SC2016 # expanded by the inner shell
unshare -m sh -c '
	set -e
	k=$1 out=$2 deb=$3 rel=$4
	mount -t overlay overlay \
		-o "lowerdir=$k/chroot,upperdir=$out/up,workdir=$out/wk" "$out/root"
	mount -t overlay overlay \
		-o "lowerdir=$k/mods/lib/modules,upperdir=$out/modup,workdir=$out/modwk" \
		"$out/root/usr/lib/modules"
	mount -t proc proc "$out/root/proc"
	cp "$deb" "$out/root/tmp/"
	chroot "$out/root" dpkg -i "/tmp/$(basename "$deb")"
	chroot "$out/root" dkms status
	chroot "$out/root" modinfo -k "$rel" -F vermagic sroce
	chroot "$out/root" modinfo -k "$rel" -n sroce
' sh "$kernel" "$out" "$deb" "$rel"

# What the guest gets: the module and the index depmod made, nothing else.
mkdir -p "$out/modules/$rel"
cp -a "$out/modup/$rel/updates" "$out/modup/$rel"/modules.* "$out/modules/$rel/"
rm -rf "$out/root" "$out/up" "$out/wk" "$out/modup" "$out/modwk"
ls "$out/modules/$rel/updates/dkms/"
