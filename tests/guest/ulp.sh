#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The kernel's own RDMA consumers in one pair of guests, one after the
# other (each creates and deletes its devices):
#   ulp.sh NVME_DRV0 NVME_DRV1 NVME_SIZE NFS_DRV0 NFS_DRV1 NFS_SIZE [CHAOS]
# nvmeof.sh with VM0 the NVMe target, then nfsrdma.sh with VM0 the NFS
# server; the drivers may differ between the two, so one run covers
# sroce on either side of rdma_rxe. CHAOS: nvmeof.sh's rounds of device
# removal under fio.
set -u
here=$(dirname "$0")
[ $# -eq 6 ] || [ $# -eq 7 ] || { echo "usage: ulp.sh NVME_DRV0 NVME_DRV1 NVME_SIZE NFS_DRV0 NFS_DRV1 NFS_SIZE [CHAOS]" >&2; exit 2; }
# One kmemleak scan, nfsrdma.sh's, covers both (lib.sh kmemleak_check).
SROCE_KMEMLEAK_LATER=1 "$here/nvmeof.sh" "$1" "$2" "$3" "${7:-0}"
a=$?
"$here/nfsrdma.sh" "$4" "$5" "$6"
b=$?
[ $a -eq 0 ] && [ $b -eq 0 ]
