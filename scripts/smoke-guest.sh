#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest-side smoke test of the VM rig (run it through vm-run.sh): kernel,
# results share, an RDMA module, and with two guests the link between them.
set -euo pipefail
n=$SROCE_VM_INDEX

# Wait, bounded, until every guest has reached the barrier NAME.
barrier() {
	local name=$1 deadline=$((SECONDS + $2)) here
	touch "$SROCE_SHARED/$name.$n"
	while here=("$SROCE_SHARED/$name".*) && [ ${#here[@]} -lt "$SROCE_VM_COUNT" ]; do
		[ $SECONDS -lt $deadline ] || { echo "smoke: barrier $name timed out"; return 1; }
		sleep 0.2
	done
}

echo "smoke: vm$n of $SROCE_VM_COUNT, $SROCE_KERNEL kernel $(uname -r)"
echo "vm$n" > "$SROCE_OUT/smoke.txt"
[ "$(cat "$SROCE_OUT/smoke.txt")" = "vm$n" ]
modprobe ib_uverbs
[ -e /sys/class/infiniband_verbs/abi_version ]
ip addr
if [ "$SROCE_VM_COUNT" -gt 1 ]; then
	peer=$((2 - n))		# vm0 is .1, vm1 is .2
	barrier up 120
	busybox ping -c 3 -w 30 "198.18.0.$peer"
	busybox ping -6 -c 3 -w 30 "2001:2::$peer"
	barrier pinged 120	# stay up until the peer has pinged us too
fi
echo "smoke: ok"
