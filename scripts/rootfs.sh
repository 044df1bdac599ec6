#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build (once) the root file system of a newer Debian userland for the test
# guests, with mmdebstrap from Debian's registry, cached under
# /var/cache/sroce and keyed by this script (its package list) and the
# suite: a guest of that kernel sees the distribution's own rdma-core,
# perftest and pyverbs test suite, as a user of that release does.
#   rootfs.sh trixie     Debian 13 (rdma-core 56, perftest 25.01)
#   rootfs.sh sid        unstable (rdma-core 65)
# Prints the directory on stdout. The guests share it read-only over 9p
# (scripts/vm-run.sh); the host's own apt configuration is never touched.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${SROCE_CACHE:-/var/cache/sroce}
suite=${1:?usage: rootfs.sh trixie|sid}
case $suite in
trixie | sid) ;;
*) echo "rootfs.sh: unknown suite $suite" >&2; exit 2 ;;
esac

# What the guest scripts (tests/guest) run, and what PID 1 needs.
PKGS=(
	bash busybox coreutils diffutils findutils gawk grep gzip hostname
	iproute2 iputils-ping kmod procps psmisc sed util-linux
	rdma-core ibverbs-utils ibverbs-providers libibverbs1 librdmacm1
	perftest rdmacm-utils python3 python3-pyverbs
	ucx-utils openmpi-bin python3-mpi4py libfabric-bin qperf
	tshark fio nvme-cli nfs-kernel-server nfs-common rpcbind nftables
)

key=$({ cat "$0"; echo "${PKGS[*]}"; } | sha256sum | cut -c1-12)
dir=$cache/rootfs-$suite-$key
if [ -f "$dir.done" ]; then
	echo "$dir"
	exit 0
fi
mkdir -p "$cache"
exec 9>"$cache/rootfs-$suite.lock"
flock 9
if [ -f "$dir.done" ]; then
	echo "$dir"
	exit 0
fi

log() { echo "rootfs.sh($suite): $*" >&2; }
start=$(date +%s)
rm -rf "$dir"
# shellcheck source=scripts/suite-apt.sh
. "$here/suite-apt.sh"
mirror=$(suite_apt_mirror)
log "mmdebstrap of ${#PKGS[@]} packages (and what they need) into $dir"
# The registry's sid Release file can be past its Valid-Until date (a
# snapshot): apt would refuse it, so that check is off for the build.
mmdebstrap --variant=minbase --mode=root --quiet \
	--aptopt='APT::Install-Recommends "false"' \
	--aptopt='Acquire::Check-Valid-Until "false"' \
	--include="$(IFS=,; echo "${PKGS[*]}")" \
	--customize-hook='rm -f "$1"/etc/hostname' \
	"$suite" "$dir" "$mirror" >&2
# Mount points the guests need on a read-only root.
mkdir -p "$dir/mnt" "$dir/sys/kernel/config" "$dir/lib/modules"
du -sh "$dir" | awk '{ print "rootfs.sh: " $1 }' >&2
touch "$dir.done"
log "built in $(($(date +%s) - start)) s"
echo "$dir"
