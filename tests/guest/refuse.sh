#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Two guests, sroce on both: an RC transfer whose packets the client's own
# stack starts refusing mid-run must end in an error completion within the
# QP's timeout and retry budget, not run on with every packet dropped:
#   nft     an nftables output rule drops udp/4791 (-EPERM: tx_refused)
#   tc      a tc egress filter drops udp/4791 (looks like a full queue:
#           tx_drops, each packet tried again a few times, then lost)
#   mtu     at netdev MTU 9000 and path MTU 4096, the client's netdev MTU
#           cut to 1500 (-EMSGSIZE: tx_refused)
# Guest 1 serves ib_write_bw -D RUN; guest 0's client starts the refusal
# 3 s in and must fail well before RUN ends, with the counter risen; the
# refusal is then lifted and a clean run between the same guests passes.
set -u
. "$(dirname "$0")/lib.sh"

RUN=60		# the client's -D; perftest's timeout 14, 7 retries: seconds
LIMIT=45	# the client must have failed by then
me=$RDMA_ME

kmemleak_clear
device_up sroce
t "both guests ready" guest_barrier refuse-ready 120

nft_on() {
	nft add table inet sroce_refuse &&
		nft add chain inet sroce_refuse out \
			'{ type filter hook output priority 0; }' &&
		nft add rule inet sroce_refuse out udp dport 4791 drop
}
nft_off() { nft delete table inet sroce_refuse; }
tc_on() {
	tc qdisc add dev eth0 clsact &&
		tc filter add dev eth0 egress protocol ip flower ip_proto udp \
			dst_port 4791 action drop
}
tc_off() { tc qdisc del dev eth0 clsact; }
mtu_on() { ip link set eth0 mtu 1500; }
mtu_off() { :; }

# one CASE NETDEV_MTU PATH_MTU COUNTER
one() {
	local c=$1 nmtu=$2 pmtu=$3 cnt=$4 gid port=$((19400 + RDMA_SEQ)) pid
	local log=$SROCE_OUT/refuse-$c.log rc t0 took before
	ip link set eth0 mtu "$nmtu"
	t "$c: active_mtu $pmtu at netdev MTU $nmtu" wait_for 10 bash -c \
		"ibv_devinfo -d $DEV | grep -q 'active_mtu:.*$pmtu'"
	gid=$(gid_index "$DEV" v4)
	barrier "$c-mtu" 60
	if [ "$me" = 1 ]; then
		timeout $((RUN + 60)) ib_write_bw -d "$DEV" -x "$gid" -s 65536 \
			-m "$pmtu" -D "$RUN" -F -p "$port" >"$log" 2>&1 &
		pid=$!
		pair_wait_listening "$port" "$pid" && signal "$c.listening"
		wait_for $((RUN + 60)) signalled "$c.done"
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		ok "$c: the server ended with its client"
	else
		if ! wait_for 60 signalled "$c.listening"; then
			not_ok "$c: the server listens"
			signal "$c.done"
			return
		fi
		before=$(counter "$cnt" "$DEV")
		t0=$SECONDS
		timeout $((RUN + 30)) ib_write_bw -d "$DEV" -x "$gid" -s 65536 \
			-m "$pmtu" -D "$RUN" -F -p "$port" "$PEER_V4" >"$log" 2>&1 &
		pid=$!
		sleep 3
		t "$c: the refusal set up" "${c}_on"
		wait "$pid"
		rc=$?
		took=$((SECONDS - t0))
		t "$c: the refusal lifted" "${c}_off"
		signal "$c.done"
		grep -m2 -i -E 'error|failed' "$log" | sed "s/^/# $c: /"
		if [ "$rc" != 0 ] && [ "$rc" != 124 ] && [ "$took" -le "$LIMIT" ]; then
			ok "$c: the client failed (exit $rc) after $took s, within $LIMIT s"
		else
			not_ok "$c: the client failed within $LIMIT s (exit $rc after $took s)"
		fi
		t "$c: $cnt counted the refused packets" \
			test "$(counter "$cnt" "$DEV")" -gt "$before"
		echo "# $c: $cnt $before -> $(counter "$cnt" "$DEV")"
	fi
	barrier "$c-end" $((RUN + 120))
	ip link set eth0 mtu 1500
}

one nft 1500 1024 tx_refused
one tc 1500 1024 tx_drops
one mtu 9000 4096 tx_refused

# The same guests move data again once nothing refuses it.
gid=$(gid_index "$DEV" v4)
pair "after the refusals: ib_write_bw -s 65536 -n 200" 1 60 \
	ib_write_bw -d "$DEV" -x "$gid" -s 65536 -n 200 -F -p @PORT@ -- \
	ib_write_bw -d "$DEV" -x "$gid" -s 65536 -n 200 -F -p @PORT@ "$PEER_V4"
teardown_rdma sroce
kmemleak_check
finish
