#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rdma-core's own test suite of this guest's userland against sroce0 (or,
# with "rxe", rdma_rxe's rxe0 on the same kernel, for comparison):
#   rdma-core.sh [sroce|rxe]
set -u
here=$(dirname "$0")
# shellcheck source=tests/guest/lib.sh
. "$here/lib.sh"
drv=${1:-sroce}
case $drv in
sroce)
	t "install sroce.ko for modprobe" install_sroce
	t "rdma link add sroce0" rdma link add sroce0 type sroce netdev eth0
	dev=sroce0
	;;
rxe)
	modprobe ib_uverbs
	t "rdma link add rxe0" bash -c 'modprobe rdma_rxe && rdma link add rxe0 type rxe netdev eth0'
	dev=rxe0
	;;
*) echo "usage: rdma-core.sh [sroce|rxe]" >&2; exit 2 ;;
esac
rdma_core_suite "$dev"
finish
