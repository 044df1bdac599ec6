#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build sroce-dkms_<version>_all.deb: the module's source under
# /usr/src/sroce-<version> with dkms.conf, built and installed by DKMS for
# every kernel with headers when the package is installed (and by DKMS's own
# kernel hooks after an upgrade), removed from DKMS when it is removed.
#   dkms-deb.sh [OUTDIR]      (default build/)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
outdir=${1:-$top/build}
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
drv=$(sed -n 's/^#define SROCE_DRV_VERSION\t*"\(.*\)"/\1/p' "$top/drivers/sroce/sroce.h")
[ "$ver" = "$drv" ] || { echo "dkms-deb: dkms.conf says $ver, sroce.h $drv" >&2; exit 1; }

stage=$(mktemp -d)
chmod 755 "$stage"
trap 'rm -rf "$stage"' EXIT
src=$stage/usr/src/sroce-$ver
mkdir -p "$src" "$stage/DEBIAN" "$stage/usr/share/doc/sroce-dkms"
# Only what a module build needs: no KUnit suites, no tests or tools.
(cd "$top" && cp -a Kbuild Makefile dkms.conf include "$src/" &&
	mkdir -p "$src/drivers/sroce" &&
	cp -a drivers/sroce/*.[ch] "$src/drivers/sroce/")
sed -i '/^# KUnit suites/,$d' "$src/Kbuild"
cp "$top/README.md" "$stage/usr/share/doc/sroce-dkms/"
cat >"$stage/DEBIAN/control" <<CTRL
Package: sroce-dkms
Version: $ver
Architecture: all
Section: kernel
Priority: optional
Maintainer: The sroce developers <sroce@localhost>
Depends: dkms
Recommends: rdma-core, ibverbs-providers
Description: software RoCEv2 RDMA device for any Ethernet interface (DKMS)
 sroce turns an Ethernet interface into a RoCEv2 RDMA device reached through
 stock rdma-core (the rxe provider): rdma link add sroce0 type sroce netdev
 eth0. This package builds the module with DKMS for every installed kernel.
CTRL
cat >"$stage/DEBIAN/postinst" <<POST
#!/bin/sh
set -e
if [ "\$1" = configure ]; then
	dkms add -m sroce -v $ver >/dev/null 2>&1 || true
	for b in /lib/modules/*/build; do
		[ -d "\$b" ] || continue
		k=\$(basename "\$(dirname "\$b")")
		dkms install -m sroce -v $ver -k "\$k" || echo "sroce-dkms: no module for \$k"
	done
fi
POST
cat >"$stage/DEBIAN/prerm" <<PRERM
#!/bin/sh
set -e
dkms remove -m sroce -v $ver --all >/dev/null 2>&1 || true
PRERM
chmod 755 "$stage/DEBIAN/postinst" "$stage/DEBIAN/prerm"
mkdir -p "$outdir"
deb=$outdir/sroce-dkms_${ver}_all.deb
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
echo "$deb"
