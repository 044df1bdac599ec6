#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install every Debian package sroce needs to build, lint and test.
# Idempotent: prints nothing and touches nothing when all are present.
set -euo pipefail

PKGS=(
	build-essential bc bison flex libelf-dev libssl-dev cpio xz-utils zstd kmod
	linux-image-amd64 linux-headers-amd64 linux-source-6.1
	qemu-system-x86 busybox-static mmdebstrap
	rdma-core ibverbs-utils ibverbs-providers libibverbs-dev librdmacm-dev
	perftest rdmacm-utils python3-pyverbs
	ucx-utils openmpi-bin python3-mpi4py libfabric-bin qperf
	sparse tshark iproute2 iputils-ping fio nvme-cli nfs-kernel-server python3
	nftables
)

missing=()
for p in "${PKGS[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
		missing+=("$p")
	fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "deps: need root to install: ${missing[*]}" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
stamp=/var/lib/apt/periodic/sroce-update-stamp
if [ ! -e "$stamp" ] || [ -n "$(find "$stamp" -mmin +1440 2>/dev/null)" ]; then
	apt-get update -qq
	mkdir -p "$(dirname "$stamp")" && touch "$stamp"
fi
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "deps: done"
