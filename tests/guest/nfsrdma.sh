#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# NFS over RDMA between two VMs: nfsrdma.sh DRV0 DRV1 [SIZE]
# VM0 exports a tmpfs directory with knfsd listening on RDMA port 20049 of
# its DRV0 device; VM1 mounts it with proto=rdma over its DRV1 device,
# writes files of several sizes (up to SIZE, default 64M), unmounts,
# mounts again and reads them back, byte for byte; then the server checks
# its own copies too. NFS/RDMA (rpcrdma) is a kernel consumer of sroce's
# verbs: kernel QPs and CQs, fast registration, invalidation.
set -u
here=$(dirname "$0")
# shellcheck source=tests/guest/lib.sh
. "$here/lib.sh"

DRV0=${1:?usage: nfsrdma.sh DRV0 DRV1 [SIZE]}
DRV1=${2:?usage: nfsrdma.sh DRV0 DRV1 [SIZE]}
SIZE=${3:-64M}
DRVS=("$DRV0" "$DRV1")
me=$SROCE_VM_INDEX
T0=$SECONDS
SERVER=198.18.0.1
EXPORT=/tmp/export
MNT=/tmp/nfs
SHARED=$SROCE_SHARED/nfs
T_IO=600
[ "${SROCE_KERNEL:-}" != debug ] || T_IO=1800

kmemleak_clear

device_up "${DRVS[me]}"

server_up() {
	modprobe nfsd && modprobe rpcrdma || return 1
	mkdir -p /var/lib/nfs/sm /var/lib/nfs/sm.bak /var/lib/nfs/v4recovery \
		/run/rpcbind "$EXPORT"
	touch /var/lib/nfs/etab /var/lib/nfs/rmtab
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd
	# A fresh server refuses OPENs for its grace period (90 s by
	# default): the shortest there is, set before nfsd starts.
	echo 10 >/proc/fs/nfsd/nfsv4leasetime
	echo 10 >/proc/fs/nfsd/nfsv4gracetime
	rpcbind || return 1
	exportfs -o rw,no_root_squash,insecure,fsid=0 "198.18.0.0/24:$EXPORT" || return 1
	rpc.mountd || return 1
	rpc.nfsd 4 || return 1
	echo "rdma 20049" >/proc/fs/nfsd/portlist || return 1
	grep -q '^rdma 20049' /proc/fs/nfsd/portlist
}

server_down() {
	rpc.nfsd 0
	exportfs -ua
	pkill rpc.mountd
	pkill rpcbind
	umount /proc/fs/nfsd
	modprobe -r nfsd rpcrdma
}

nfs_mount() {
	mkdir -p "$MNT"
	# The highest NFSv4 minor version both kernels have (the debug
	# kernel has 4.0 only).
	mount -t nfs4 -o proto=rdma,port=20049 "$SERVER:/" "$MNT" &&
		grep "$MNT nfs4 .*proto=rdma" /proc/mounts | sed 's/^/# /'
	grep -q "$MNT nfs4 .*proto=rdma" /proc/mounts
}

# The files the client writes: sizes around page and RPC boundaries, and
# SIZE; their checksums go to the shared directory for the server.
SIZES="1 4095 4096 65537 1048577 $SIZE"
write_files() {
	local s i=0
	mountpoint -q "$MNT" || return 1
	mkdir -p /tmp/src "$SHARED"
	for s in $SIZES; do
		i=$((i + 1))
		head -c "$s" /dev/urandom >/tmp/src/f$i || return 1
		cp /tmp/src/f$i "$MNT/f$i" || return 1
	done
	sync
	(cd /tmp/src && md5sum f*) >"$SHARED/md5" || return 1
}

compare_files() {
	local f
	mountpoint -q "$MNT" || return 1
	for f in /tmp/src/f*; do
		cmp "$f" "$MNT/${f##*/}" || return 1
	done
}

if [ "$me" = 0 ]; then
	t "knfsd exporting $EXPORT on RDMA port 20049 (${DRVS[0]})" server_up
	barrier server 300 || not_ok "client reached the server barrier"
	barrier client-done $((3 * T_IO)) || not_ok "client finished in time"
	t "the server's copies match what the client wrote" \
		bash -c "cd $EXPORT && md5sum -c --quiet $SHARED/md5"
	t "knfsd stopped, nfsd and rpcrdma unloaded" server_down
else
	barrier server 300 || not_ok "server reached the server barrier"
	t "modprobe rpcrdma" modprobe rpcrdma
	t "mount -t nfs4 -o proto=rdma $SERVER:/ (${DRVS[1]}->${DRVS[0]})" nfs_mount
	t "write $(echo "$SIZES" | wc -w) files up to $SIZE" write_files
	t "umount" umount "$MNT"
	t "mount again" nfs_mount
	t "files read back identical" compare_files
	t "umount again" umount "$MNT"
	t "rmmod rpcrdma and the NFS client" modprobe -r rpcrdma nfsv4 nfs
	barrier client-done 120
fi

teardown_rdma "${DRVS[me]}"
kmemleak_check
echo "# nfsrdma.sh ${DRV0} ${DRV1}: vm$me took $((SECONDS - T0)) s"
finish
