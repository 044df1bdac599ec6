#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Two VMs: each creates sroce0; the first sends the second hand-built
# RoCEv2 frames (good ICRC, bad ICRC, malformed; IPv4 and IPv6) and the
# second checks that its counters saw exactly those.
set -u
. "$(dirname "$0")/lib.sh"

me=$SROCE_VM_INDEX
peer=$((1 - me))

counter() {
	rdma statistic show link sroce0/1 | tr ' ' '\n' |
		awk -v k="$1" 'prev == k { print; exit } { prev = $0 }'
}

t "install sroce" install_sroce
t "rdma link add sroce0" rdma link add sroce0 type sroce netdev eth0
t "peer reachable over IPv4" wait_for 60 ping -c1 -W1 198.18.0.$((peer + 1))
t "peer reachable over IPv6" wait_for 60 ping -6 -c1 -W1 2001:2::$((peer + 1))
t "both guests ready" guest_barrier ready 120

if [ "$me" -eq 0 ]; then
	send="$PY $SROCE_TREE/tests/guest/send_roce.py eth0"
	t "send 14 IPv4 frames to the peer" $send 198.18.0.1 198.18.0.2 10 2 2
	t "send 14 IPv6 frames to the peer" $send 2001:2::1 2001:2::2 10 2 2
	guest_barrier sent 120
else
	guest_barrier sent 120
	t "28 packets counted" wait_for 10 bash -c "$(declare -f counter); [ \"\$(counter rx_packets)\" = 28 ]"
	t "20 packets with a good ICRC reach the QP lookup" test "$(counter rx_drop_no_qp)" = 20
	t "4 packets with a bad ICRC dropped and counted" test "$(counter rx_icrc_errors)" = 4
	t "4 malformed packets counted" test "$(counter rx_drop_malformed)" = 4
fi
guest_barrier done 120
t "rdma link delete sroce0" rdma link delete sroce0
finish
