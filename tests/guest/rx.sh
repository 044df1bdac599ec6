#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Two VMs: each creates sroce0; the first sends the second hand-built
# RoCEv2 frames (good ICRC, bad ICRC, malformed; IPv4 and IPv6) and the
# second checks that its counters saw exactly those. Then hand-built
# requests against live QPs of the second (wire_qp.py), answers checked.
set -u
. "$(dirname "$0")/lib.sh"

me=$SROCE_VM_INDEX
peer=$((1 - me))

kmemleak_clear
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

# Hand-built requests against live RC QPs (tests/pyverbs/wire_qp.py): the
# second guest owns the QPs and checks its memory, QP states and receive
# completions; the first sends and checks every answer on the wire.
wire=$SROCE_TREE/tests/pyverbs/wire_qp.py
guest_barrier wire-start 120
if [ "$me" -eq 0 ]; then
	if wait_for 120 test -e "$SYNC_DIR/wire.json"; then
		timeout -k 5 300 $PY "$wire" send eth0 --src 198.18.0.1 \
			--dst 198.18.0.2 --json "$SYNC_DIR/wire.json" ||
			T_FAILED=$((T_FAILED + 1))
	else
		not_ok "wire_qp.py: the target guest set up its QPs"
	fi
	signal wire.done
else
	before=$(counter rx_drop_malformed)
	peer0=$(counter rx_drop_not_peer) pkey0=$(counter rx_drop_pkey)
	timeout -k 5 400 $PY "$wire" target sroce0 --ip 198.18.0.2 \
		--peer 198.18.0.1 --json "$SYNC_DIR/wire.json" \
		--done "$SYNC_DIR/wire.done" || T_FAILED=$((T_FAILED + 1))
	t "the 2 requests with headers cut short counted as malformed" \
		test "$(counter rx_drop_malformed)" = $((before + 2))
	# What wire_qp.py sent with SPOOF and FOREIGN_PKEY.
	t "the 4 packets from a third address counted in rx_drop_not_peer" \
		test "$(counter rx_drop_not_peer)" = $((peer0 + 4))
	t "the SEND with a foreign P_Key counted in rx_drop_pkey" \
		test "$(counter rx_drop_pkey)" = $((pkey0 + 1))
fi
guest_barrier "done" 120
t "rdma link delete sroce0" rdma link delete sroce0
kmemleak_check
finish
