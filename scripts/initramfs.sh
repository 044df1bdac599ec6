#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build (once) the initramfs for the test guests: busybox plus just the
# modules needed to mount the host's / over virtio-9p, then switch_root into
# $SROCE_INIT (see vm-run.sh). Prints the cached cpio.gz path on stdout.
#
# Usage: initramfs.sh KVER [MODROOT]
#   MODROOT holds lib/modules/KVER (default /; the debug kernel's mods dir).
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 KVER [MODROOT]" >&2; exit 2; }
kver=$1
modroot=${2:-/}
cache=${SROCE_CACHE:-/var/cache/sroce}

# Ask modprobe for the load order; built-in targets print "builtin" and drop
# out, so a kernel with all of this built in gets no modules at all.
kos=$(for m in virtio_pci 9pnet_virtio 9p; do
	modprobe -d "$modroot" -S "$kver" --show-depends "$m"
done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }')

key=$({ cat "$0"; echo "$kos"; cat /bin/busybox; } | sha256sum | cut -c1-12)
img=$cache/initramfs-$kver-$key.cpio.gz
if [ -f "$img" ]; then
	echo "$img"
	exit 0
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,dev,modules}
cp /bin/busybox "$stage/bin/"
for a in sh cat insmod mount mkdir sleep poweroff switch_root; do
	ln -s busybox "$stage/bin/$a"
done
# The kernel opens /dev/console for /init before anything is mounted.
mknod "$stage/dev/console" c 5 1
for ko in $kos; do
	name=$(basename "$ko")
	name=${name%%.ko*}.ko
	case $ko in
	*.xz) xz -dc "$ko" ;;
	*.zst) zstd -qdc "$ko" ;;
	*) cat "$ko" ;;
	esac > "$stage/modules/$name"
	echo "$name" >> "$stage/modules/order"
done
touch "$stage/modules/order"

cat > "$stage/init" <<'EOF'
#!/bin/sh
# sroce initramfs: load the 9p modules, mount the guest's root (the host's /
# or a cached userland) read-only and hand over to $SROCE_INIT. Kernel command-line KEY=value settings arrive as
# environment and pass through switch_root unchanged.
fail() { echo "initramfs: $*"; poweroff -f; }
for m in $(cat /modules/order); do
	insmod "/modules/$m" || echo "initramfs: insmod $m failed"
done
mkdir /newroot
# The virtio-9p device can show up a moment after its driver loads.
i=0
until mount -t 9p -o ro,trans=virtio,version=9p2000.L,msize=512000,cache=loose \
		hostroot /newroot; do
	i=$((i + 1))
	[ $i -lt 5 ] || fail "cannot mount the 9p tag hostroot"
	sleep 1
done
# A root other than the host's has the tree only as a mount point.
if [ ! -x "/newroot$SROCE_INIT" ] && [ -d "/newroot$SROCE_TREE" ]; then
	i=0
	until mount -t 9p -o ro,trans=virtio,version=9p2000.L,msize=512000,cache=loose \
			tree "/newroot$SROCE_TREE"; do
		i=$((i + 1))
		[ $i -lt 5 ] || fail "cannot mount the 9p tag tree"
		sleep 1
	done
fi
[ -x "/newroot$SROCE_INIT" ] || fail "SROCE_INIT=$SROCE_INIT is not executable"
exec switch_root /newroot "$SROCE_INIT"
EOF
chmod +x "$stage/init"

mkdir -p "$cache"
(cd "$stage" && find . | cpio -o -H newc --quiet | gzip -9) > "$img.tmp.$$"
mv "$img.tmp.$$" "$img"
echo "$img"
