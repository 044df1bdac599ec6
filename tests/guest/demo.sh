#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest side of scripts/demo.sh: create sroce0, show it, exchange RoCEv2
# datagrams with the other VM and show the counters that saw them.
set -u
. "$(dirname "$0")/lib.sh"
exec > >(tee "$SROCE_OUT/demo.log") 2>&1

me=$SROCE_VM_INDEX
peer=$((1 - me))
run() { echo "\$ $*"; "$@"; }

install_sroce >/dev/null
run rdma link add sroce0 type sroce netdev eth0
run rdma link show
run ibv_devices
run ibv_devinfo -v -d sroce0
mkdir -p "$SROCE_SHARED/sync"
touch "$SROCE_SHARED/sync/up.$me"
wait_for 120 test -e "$SROCE_SHARED/sync/up.$peer"
wait_for 60 ping -c1 -W1 198.18.0.$((peer + 1))
echo "\$ (send 8 RoCEv2 SEND_ONLY frames to 198.18.0.$((peer + 1)):4791)"
"$PY" "$SROCE_TREE/tests/guest/send_roce.py" eth0 198.18.0.$((me + 1)) \
	198.18.0.$((peer + 1)) 8 0 0
touch "$SROCE_SHARED/sync/sent.$me"
wait_for 120 test -e "$SROCE_SHARED/sync/sent.$peer"
sleep 1
run rdma statistic show link sroce0/1
run rdma link delete sroce0
