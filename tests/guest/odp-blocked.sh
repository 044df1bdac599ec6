#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tests/pyverbs/odp_blocked.py in a boot of its own part, for the kernels
# whose make check has no functional.sh boot (the debug kernel): an ODP
# fault blocked for good in a user's FUSE daemon makes nothing else wait,
# and rmmod is refused until it ends. In one guest.
#   usage: odp-blocked.sh [FAULTS]  (QP pairs whose faults block; 280)
set -u
# shellcheck source=tests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

kmemleak_clear
t "install sroce.ko for modprobe, rdma link add sroce0" setup_rdma sroce
if ! timeout -k 5 300 "$PY" "$SROCE_TREE/tests/pyverbs/odp_blocked.py" \
	sroce0 --ip "198.18.0.$((SROCE_VM_INDEX + 1))" --netdev eth0 \
	--faults "${1:-280}"; then
	T_FAILED=$((T_FAILED + 1))
fi
t "sroce0 back after the blocked fault" dev_exists sroce0
t "rdma link delete sroce0" timeout 60 rdma link delete sroce0
t "rmmod sroce" timeout 60 rmmod sroce
kmemleak_check
finish
