#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Two VMs move BYTES through tools/sroce-integrity (random sizes 1 B..4 MiB,
# send/write/write-with-imm/read, every byte verified on both sides), then
# ATOMICS atomics through tools/sroce-atomic (every result checked).
# Usage: integrity.sh DRV0 DRV1 BYTES [clean|netem [OPS [ATOMICS]]]
#   DRVn: sroce or rxe for guest n (guest 1 serves, guest 0 drives).
#   netem: both guests' NICs lose 1%, reorder, duplicate and corrupt
#   packets (lib.sh netem_on), so requests, data, ACKs and READ responses
#   are all lost at times; the run must still be clean, the sroce side
#   must have retransmitted and each sroce side must have counted every
#   frame that reached it, each corrupted one where it was dropped
#   (lib.sh account_check), some by the ICRC check. Then UD datagrams from
#   guest 0 to guest 1 (tests/pyverbs/ud_stream.py), every one that
#   arrives checked.
#   OPS: the client's --ops list (default: all).
#   ATOMICS: how many atomics (default 3000).
set -u
. "$(dirname "$0")/lib.sh"

drvs=("${1:?DRV0}" "${2:?DRV1}")
bytes=${3:?BYTES}
mode=${4:-clean}
ops=${5:-send,write,write_imm,read}
atomics=${6:-3000}
me=$SROCE_VM_INDEX
peer=$((1 - me))
drv=${drvs[me]}
tool=$SROCE_TREE/tools/sroce-integrity
log=$SROCE_OUT/integrity-$mode.log

has_gid() { gid_lookup "$dev" "$1" >/dev/null; }

if [ "$drv" = sroce ]; then
	dev=sroce0
	t "install sroce" install_sroce
	t "rdma link add sroce0" rdma link add sroce0 type sroce netdev eth0
else
	dev=rxe0
	t "modprobe rdma_rxe" modprobe rdma_rxe
	t "modprobe ib_uverbs" modprobe ib_uverbs
	t "rdma link add rxe0" rdma link add rxe0 type rxe netdev eth0
fi
t "modprobe rdma_ucm" modprobe rdma_ucm
t "IPv4 RoCE GID present" wait_for 30 has_gid \
	"$(printf '0000:0000:0000:0000:0000:ffff:c612:%04x' $((me + 1)))"
t "peer reachable over IPv4" wait_for 60 ping -c1 -W1 "198.18.0.$((peer + 1))"
if [ "$mode" = netem ]; then
	[ "$drv" = sroce ] && account_start "198.18.0.$((me + 1))"
	t "netem on eth0: 1% loss, reordering, 1% duplication, 2% corruption" \
		netem_on
fi
t "both guests ready" guest_barrier ready 300

# The clean run rides out a guest stalled for seconds on a loaded TCG host
# (8 tries of ~2 s, not rdma_cm's ~0.5 s); netem's losses are meant to be
# recovered by the timer, at rdma_cm's default.
tmo=()
[ "$mode" = netem ] || tmo=(--ack-timeout 19)

if [ "$me" = 1 ]; then
	signal listen
	t "integrity server ($drv, $bytes, $mode): clean" \
		timeout 1500 "$tool" -s -p 18777 --listen-timeout 300 \
		--timeout 120 "${tmo[@]}"
else
	wait_for 60 signalled listen
	sleep 2
	t "integrity client ($drv, $bytes, $mode): zero mismatches, no error" \
		bash -c "timeout 1500 '$tool' -c 198.18.0.2 -p 18777 --bytes $bytes --ops $ops --seed 11 --timeout 120 ${tmo[*]} > '$log' 2>&1"
	grep -E '^integrity' "$log" | sed 's/^/# /'
fi
# Atomics on one word, every result checked: through netem this is the
# check that a retransmitted atomic is executed once.
atool=$SROCE_TREE/tools/sroce-atomic
t "atomics barrier" guest_barrier atomics 300
if [ "$me" = 1 ]; then
	signal atomic-listen
	t "atomic server ($drv, $mode): the word holds what the client expects" \
		timeout 600 "$atool" -s -p 18778
else
	wait_for 60 signalled atomic-listen
	sleep 2
	t "atomic client ($drv, $mode): $atomics atomics, every result right" \
		bash -c "timeout 600 '$atool' -c 198.18.0.2 -p 18778 -n $atomics -d 8 --seed 7 ${tmo[*]} > '$SROCE_OUT/atomic-$mode.log' 2>&1"
	sed 's/^/# /' "$SROCE_OUT/atomic-$mode.log"
fi

# UD datagrams from guest 0 to guest 1 (tests/pyverbs/ud_stream.py),
# through netem: every one that arrives intact, some lost or doubled.
# (Clean UD between guests: rc.sh's perftest and pingpong runs.)
ud_run() {
	timeout 900 $PY "$SROCE_TREE/tests/pyverbs/ud_stream.py" "$@" \
		--sync "$SYNC_DIR" >"$SROCE_OUT/ud-$mode.log" 2>&1
}
if [ "$mode" = netem ]; then
	t "UD barrier" guest_barrier ud 300
	if [ "$me" = 1 ]; then
		t "UD receiver ($drv, $mode): exit 0" ud_run receiver "$dev" --ip 198.18.0.2
	else
		t "UD sender ($drv, $mode): exit 0" ud_run sender "$dev" \
			--ip 198.18.0.1 --peer 198.18.0.2
	fi
	cat "$SROCE_OUT/ud-$mode.log"
fi

# What the link saw, for a run that lost its peer: whether the peer still
# answers, drops at the NIC and the qdisc, the neighbour entry and ARP's
# discards, UDP receive errors.
if ping -c 3 -W 2 "198.18.0.$((peer + 1))" >/dev/null; then
	echo "# link: the peer answers ping after the run"
else
	echo "# link: the peer does NOT answer ping after the run"
fi
ip -s -s link show eth0 | sed 's/^/# link: /'
tc -s qdisc show dev eth0 | sed 's/^/# qdisc: /'
ip neigh show dev eth0 | sed 's/^/# neigh: /'
head -2 /proc/net/stat/arp_cache | sed 's/^/# arp_cache: /'
nstat -az Udp* Ip*Discards 2>/dev/null | grep -v ' 0 ' | sed 's/^/# nstat: /'
if [ "$drv" = sroce ]; then
	echo "# counters: $(rdma statistic show link sroce0/1)"
	[ "$mode" = netem ] && [ "$me" = 0 ] &&
		t "retransmit counter is non-zero" test "$(counter retransmits)" -gt 0
fi
[ "$mode" = netem ] && t "traffic done" guest_barrier traffic-done 300
if [ "$mode" = netem ] && [ "$drv" = sroce ]; then
	# The peer's corrupted packets: each one that reached sroce dropped
	# here by the ICRC check and counted (none got through: every byte
	# above was verified), once the peer has stopped sending.
	account_check "198.18.0.$((me + 1))"
	t "netem's corrupted packets dropped by the ICRC check (rx_icrc_errors $(counter rx_icrc_errors))" \
		test "$(counter rx_icrc_errors)" -gt 0
fi
t "both done" guest_barrier "done" 300
[ "$mode" = netem ] && netem_off
t "rdma link delete $dev" rdma link delete "$dev"
finish
