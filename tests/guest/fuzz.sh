#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Two VMs: the first fuzzes the second's RoCEv2 receive path with
# tools/sroce-fuzz (generational frames, mutated valid ones and captured
# ones: the second guest first sends every opcode it has to the first,
# which captures them as seeds; half over IPv4 and
# half over IPv6, from the peer's address and from a third one,
# 198.18.0.101 or 2001:2::101) aimed at QPs in every state
# (tests/pyverbs/fuzz_target.py), while a live RC connection between the
# two keeps moving verified data. The second checks its guard bytes
# around every MR, the live connection after the run, and that its
# counters account for every frame that arrived; the first checks the
# second's READ responses and atomic ACKs against the requests it sent
# and the MRs' rights (and a read-only MR's bytes). The harness fails the
# run on any splat in either guest's log.
# Usage: fuzz.sh [COUNT [WINDOW [SEED]]]: COUNT frames (10^6; 10^5 in the
# debug kernel); at most WINDOW (64) of them on the way before the target
# answers a ping (0: no such limit; frames then get lost between the
# guests under TCG, the target's drop counters can be checked only as
# bounds, and more than 1% lost fails the run); SEED for the fuzzer.
set -u
. "$(dirname "$0")/lib.sh"

me=$SROCE_VM_INDEX
peer=$((1 - me))
if [ "$SROCE_KERNEL" = debug ]; then
	count=${1:-100000}
else
	count=${1:-1000000}
fi
window=${2:-64}
seed=${3:-$((0x5eed))}
fuzz=$SROCE_TREE/tools/sroce-fuzz
target=$SROCE_TREE/tests/pyverbs/fuzz_target.py
third=198.18.0.101
third6=2001:2::101

kmemleak_clear
t "install sroce" install_sroce
t "rdma link add sroce0" rdma link add sroce0 type sroce netdev eth0
t "peer reachable over IPv4" wait_for 60 ping -c1 -W1 198.18.0.$((peer + 1))
[ "$me" -eq 0 ] && t "third addresses $third and $third6 on eth0" \
	bash -c "ip addr add $third/24 dev eth0 &&
		ip addr add $third6/64 dev eth0 nodad"
t "both guests ready" guest_barrier fuzz-ready 120

# The opcodes of the target's seed traffic (fuzz_target.py send_seeds):
# RC 0x00-0x14 (every SEND, WRITE, READ and atomic packet, ACK, atomic
# ACK), UC SEND first/middle/last, only with immediate, WRITE
# first/middle/last, only with immediate; UD SEND only, with immediate.
SEED_OPS="00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f 10 11 12 13 14
	20 21 22 25 26 27 28 2b 64 65"

# A count from the fuzzer's summary line: replies_$1=N.
reply_count() {
	sed -n "s/^sroce-fuzz: sent=.* replies_$1=\([0-9]*\).*/\1/p" "$SROCE_OUT/fuzz.log"
}

if [ "$me" -eq 0 ]; then
	# The seeds of the fuzzer's third mode: the real traffic between the
	# two guests, captured until the target is ready to be fuzzed.
	dumpcap -q -P -i eth0 -f 'udp port 4791' -w /tmp/seeds.pcap \
		>"$SROCE_OUT/dumpcap.log" 2>&1 &
	cap_pid=$!
	t "dumpcap capturing the seed traffic" \
		wait_for 60 grep -q "^Capturing on 'eth0'" "$SROCE_OUT/dumpcap.log"
	$PY "$target" peer sroce0 --ip 198.18.0.1 --sync "$SYNC_DIR" \
		>"$SROCE_OUT/fuzz-peer.log" 2>&1 &
	peer_pid=$!
	if wait_for 300 test -e "$SYNC_DIR/fuzz-target.txt"; then
		kill -INT $cap_pid
		wait $cap_pid
		dmac=$(ip neigh show 198.18.0.2 | awk '{ for (i = 1; i < NF; i++) if ($i == "lladdr") print $(i + 1) }')
		echo "# sroce-fuzz: $count frames, seed $seed, window $window, to $dmac"
		t "sroce-fuzz sent $count frames (seed $seed)" bash -c \
			"'$fuzz' -i eth0 --src 198.18.0.1 --spoof $third \
			--dst 198.18.0.2 --dmac $dmac --target '$SYNC_DIR/fuzz-target.txt' \
			--src6 2001:2::1 --spoof6 $third6 --dst6 2001:2::2 \
			--seeds /tmp/seeds.pcap \
			--seed $seed --count $count --window $window >'$SROCE_OUT/fuzz.log' 2>&1"
		got=$(sed -n 's/^sroce-fuzz: seeds=.*opcodes=[0-9]*: //p' "$SROCE_OUT/fuzz.log")
		missing=
		for op in $SEED_OPS; do
			[[ " $got " == *" $op "* ]] || missing+="$op "
		done
		t "the captured seeds hold every opcode of the seed traffic" \
			test -z "$missing"
		[ -z "$missing" ] || echo "# missing: $missing"
		# The target's READ responses and atomic ACKs, matched by the
		# fuzzer against the requests it sent and the MRs' rights (the
		# log above names any that answer none).
		r_read=$(reply_count read)
		r_bytes=$(reply_count read_bytes)
		r_atomic=$(reply_count atomic)
		r_awrite=$(reply_count atomic_write)
		r_bad=$(reply_count bad)
		# A frame the capture dropped is a reply nobody checked.
		r_lost=$(reply_count lost)
		t "target replies: ${r_read:-?} READ responses (${r_bytes:-?} of the read-only MR, bytes checked), ${r_atomic:-?} atomic ACKs, ${r_awrite:-?} ATOMIC WRITE responses, each for a request the MR's rights allow; ${r_bad:-?} not, ${r_lost:-?} lost by the capture" \
			test "${r_bad:-1}" -eq 0 -a "${r_lost:-1}" -eq 0 -a \
			"${r_read:-0}" -gt 0 -a "${r_bytes:-0}" -gt 0 -a \
			"${r_atomic:-0}" -gt 0 -a "${r_awrite:-0}" -gt 0
		sed 's/^/# /' "$SROCE_OUT/fuzz.log"
		grep '^sroce-fuzz: sent=' "$SROCE_OUT/fuzz.log" >"$SYNC_DIR/fuzz.result.tmp"
		mv "$SYNC_DIR/fuzz.result.tmp" "$SYNC_DIR/fuzz.result"
	else
		kill -INT $cap_pid
		not_ok "the target guest set up its QPs"
	fi
	wait $peer_pid
	rc=$?
	sed 's/^/# peer: /' "$SROCE_OUT/fuzz-peer.log"
	t "the live connection's peer: QP in RTS at the end" test $rc -eq 0
	ip addr del $third/24 dev eth0
	ip addr del $third6/64 dev eth0
else
	t "fuzz target: guards, live connection, accounting" bash -c \
		"timeout -k 5 3600 $PY '$target' target sroce0 --ip 198.18.0.2 --ip6 2001:2::2 \
		--peer 198.18.0.1 --sync '$SYNC_DIR' --counter '$fuzz' \
		>'$SROCE_OUT/fuzz-target.log' 2>&1"
	cat "$SROCE_OUT/fuzz-target.log"
	echo "# counters: $(rdma statistic show link sroce0/1)"
	# Where frames that never reached the receive path were lost, if any.
	ip -s link show eth0 | sed 's/^/# link: /'
	awk '{ print "# softnet_stat: processed 0x" $1 ", dropped 0x" $2 }' \
		/proc/net/softnet_stat
	t "the target still answers ping" ping -c1 -W2 198.18.0.1
fi
t "both done" guest_barrier fuzz-done 600
t "rdma link delete sroce0" rdma link delete sroce0
kmemleak_check
finish
