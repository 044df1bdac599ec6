#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# RC error paths (and happy paths as controls) between RC QPs of one sroce0
# device talking to each other, through stock rdma-core (pyverbs):
# tests/pyverbs/rc_errors.py; then atomics.py, UD, UC and SRQ QPs (ud.py,
# uc.py, srq.py) and memory windows (mw.py). One VM, Debian or debug kernel:
#   scripts/vm-run.sh --kernel 6.1 --out DIR -- tests/guest/run.sh rc-errors.sh
set -u
# shellcheck source=tests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

T0=$SECONDS
MY_V4=198.18.0.$((SROCE_VM_INDEX + 1))
MY_V6=2001:2::$((SROCE_VM_INDEX + 1))	# guest-init.sh's
# An address with a static neighbour entry and nobody behind it: packets to
# it leave on eth0 and are never answered (retry-exhausted case).
BLACKHOLE=198.18.0.201
PY_TIMEOUT=${RC_ERRORS_TIMEOUT:-700}
PY_TIMEOUT_SHORT=300	# each of atomics.py, ud.py, uc.py, srq.py, mw.py

# Forget leaks from boot; the scan at the end reports only ours.
kmemleak_clear
t "install sroce.ko for modprobe" install_sroce
t "rdma link add sroce0" rdma link add sroce0 type sroce netdev eth0
t "sroce0 port active" wait_for 20 \
	bash -c '[ "$(cat /sys/class/infiniband/sroce0/ports/1/state)" = "4: ACTIVE" ]'
t "static neighbour for $BLACKHOLE" \
	ip neigh replace "$BLACKHOLE" lladdr 02:00:00:00:00:c9 dev eth0 nud permanent
# A second interface with a device of its own, and the same silent peer
# reachable on it (rc_errors.py case 8e: which netdev its packets take,
# counted in d0's tx_packets). IPv6 off on d0: a fresh interface sends
# router solicitations by itself, backing off (measured on a dummy in a
# 6.1 guest: at about 4, 11, 23, 50 and 107 s), and one that fell in case
# 8e's window made it count 4 packets instead of 3 (check of 4c9567e).
modprobe dummy numdummies=0 2>/dev/null
t "second interface d0 with 198.19.0.1 and sroce1" bash -c '
	ip link add d0 type dummy &&
	sysctl -qw net.ipv6.conf.d0.disable_ipv6=1 && ip link set d0 up &&
	ip addr add 198.19.0.1/16 dev d0 &&
	ip neigh replace '"$BLACKHOLE"' lladdr 02:00:00:00:00:c9 dev d0 nud permanent &&
	rdma link add sroce1 type sroce netdev d0'

# The error paths' tracepoints watch the whole run (checked below).
t0_tx_naks=$(counter tx_naks) t0_tx_rnr=$(counter tx_rnr_naks)
t0_rx_rnr=$(counter rx_rnr_naks) t0_retx=$(counter retransmits)
t0_timeouts=$(counter ack_timeouts) t0_cuts=$(counter window_cuts)
t0_naks=$(counter rx_naks) t0_oos=$(counter rx_out_of_sequence)
t0_rewinds=$(counter rewinds) t0_work=$(counter tx_work_runs)
t "trace: sroce_nak, sroce_retransmit, sroce_err_cqe, sroce_qp_state on" \
	trace_on sroce_nak sroce_retransmit sroce_err_cqe sroce_qp_state

timeout -k 5 "$PY_TIMEOUT" "$PY" "$SROCE_TREE/tests/pyverbs/rc_errors.py" \
	sroce0 --ip "$MY_V4" --blackhole "$BLACKHOLE" --netdev eth0 \
	--multihome sroce1,d0,198.19.0.1
rc=$?
if [ $rc -ne 0 ]; then
	T_FAILED=$((T_FAILED + 1))
	[ $rc -ge 124 ] && echo "# rc_errors.py: killed or crashed (exit $rc)"
fi
# Atomics: results, ordering, two QPs on one word, ATOMIC WRITE, errors.
timeout -k 5 "$PY_TIMEOUT_SHORT" "$PY" "$SROCE_TREE/tests/pyverbs/atomics.py" sroce0 --ip "$MY_V4"
rc=$?
if [ $rc -ne 0 ]; then
	T_FAILED=$((T_FAILED + 1))
	[ $rc -ge 124 ] && echo "# atomics.py: killed or crashed (exit $rc)"
fi
# UD (both GIDs, GRH area, Q_Key, MTU), UC (no ACKs, silent drops), SRQ
# (sharing by RC, UC and UD QPs, limit event, resize), memory windows.
for py in ud.py uc.py srq.py mw.py; do
	args=(sroce0 --ip "$MY_V4")
	[ $py = ud.py ] && args+=(--ip6 "$MY_V6" --netdev eth0)
	timeout -k 5 "$PY_TIMEOUT_SHORT" "$PY" "$SROCE_TREE/tests/pyverbs/$py" "${args[@]}"
	rc=$?
	if [ $rc -ne 0 ]; then
		T_FAILED=$((T_FAILED + 1))
		[ $rc -ge 124 ] && echo "# $py: killed or crashed (exit $rc)"
	fi
done

# UD multicast through raw verbs (tools/sroce-mcast) over the IPv4 and the
# IPv6 RoCE v2 GID: delivery to the attached QPs only, the netdev's group
# membership, detach, the Q_Key. rdma_cm (mckey) can do IPv4 only. A
# group per guest: two guests running this at once on one link would
# otherwise get each other's datagrams (seen: "2 completions, want 1").
# Then over VLAN 7's GIDs: the group must be joined on the VLAN netdev
# too, or the IP stack drops its datagrams (here the ones looped back
# through eth0.7), and a VLAN added while QPs are attached (eth0.8,
# eth0.9) must join at once.
MY_VLAN_V6=2001:2:0:7::$((RDMA_ME + 1))
groups=("$MY_V4 ::ffff:239.1.2.$((RDMA_ME + 3))"
	"$MY_V6 ff0e::5:$((RDMA_ME + 1))")
if vlan_up && ip addr add "$MY_VLAN_V6/64" dev eth0.7 nodad; then
	groups+=("$MY_VLAN_V4 ::ffff:239.1.7.$((RDMA_ME + 3)) eth0.8"
		"$MY_VLAN_V6 ff0e::7:$((RDMA_ME + 1)) eth0.9")
else
	not_ok "sroce-mcast: VLAN 7 on eth0 with $MY_VLAN_V4 and $MY_VLAN_V6"
fi
for grp in "${groups[@]}"; do
	read -r addr mgid late <<<"$grp"
	gid=$(gid_of "$addr")
	if ! wait_for 20 gid_lookup sroce0 "$gid"; then
		not_ok "sroce-mcast: a RoCE v2 GID of $addr on sroce0"
		continue
	fi
	timeout -k 5 "$PY_TIMEOUT_SHORT" "$SROCE_TREE/tools/sroce-mcast" sroce0 \
		--gid-index "$(gid_lookup sroce0 "$gid")" --mgid "$mgid" \
		${late:+--late-vlan "$late"} 2>&1
	rc=$?
	if [ $rc -ne 0 ]; then
		T_FAILED=$((T_FAILED + 1))
		[ $rc -ge 124 ] && echo "# sroce-mcast: killed or crashed (exit $rc)"
	fi
done
ip link del eth0.7 2>/dev/null

# Each NAK and RNR NAK sent and received, each packet sent again, as the
# counters have them; the error completions by status; QPs into ERR.
trace_off rc-errors
for c in "tx_naks $t0_tx_naks sroce_nak: dev sroce0 .* sent NAK " \
	"tx_rnr_naks $t0_tx_rnr sroce_nak: dev sroce0 .* sent RNR NAK " \
	"rx_rnr_naks $t0_rx_rnr sroce_nak: dev sroce0 .* received RNR NAK " \
	"retransmits $t0_retx sroce_retransmit: dev sroce0 "; do
	read -r name before pat <<<"$c"
	d=$(($(counter "$name") - before))
	t "trace: one '$pat' event per count of $name (+$d)" \
		test "$(trace_count rc-errors "$pat")" = "$d"
done
for st in "retry exceeded" "RNR retry exceeded" "remote access" "flushed"; do
	t "trace: error completions with status '$st'" \
		test "$(trace_count rc-errors "sroce_err_cqe: .*($st)")" -gt 0
done
t "trace: NAKs received by requesters" \
	test "$(trace_count rc-errors 'sroce_nak: .* received NAK ')" -gt 0
# The requester's recovery counters (the bench reads them per run): a
# timeout that leaves retries cuts the window and goes back to the oldest
# PSN; the last one of a QP whose retries ran out (the blackhole's) cuts
# nothing. A sequence NAK or a gap in READ responses cuts it at most once
# each and rewinds too, and messages over the pass budget go on in the
# QP's worker.
d_timeouts=$(($(counter ack_timeouts) - t0_timeouts))
d_losses=$((d_timeouts + $(counter rx_naks) - t0_naks + $(counter rx_out_of_sequence) - t0_oos))
d_cuts=$(($(counter window_cuts) - t0_cuts))
d_rewinds=$(($(counter rewinds) - t0_rewinds))
t "counters: window_cuts (+$d_cuts) below timeouts, NAKs and gaps (+$d_losses), above 0" \
	test "$d_cuts" -gt 0 -a "$d_cuts" -lt "$d_losses"
t "counters: rewinds (+$d_rewinds) at least window_cuts (+$d_cuts)" \
	test "$d_rewinds" -ge "$d_cuts"
t "counters: tx_work_runs rose (+$(($(counter tx_work_runs) - t0_work)))" \
	test "$(counter tx_work_runs)" -gt "$t0_work"
t "trace: QPs moved to ERR" test "$(trace_count rc-errors 'sroce_qp_state: .* -> ERR')" -gt 0
# The kernel log names device and QP (or CQ), rate-limited per message.
t "log: a failed send queue, with its device, QP and status" \
	bash -c "dmesg | grep -q '] sroce0: qp 0x[0-9a-f]*: send queue failed: .*; QP to the error state'"
t "log: the receive CQ overflow, with its device and CQ" \
	bash -c "dmesg | grep -q '] sroce0: cq [0-9]* overflowed ([0-9]* entries)'"

echo "# rdma statistic show link sroce0/1:"
# One "name value" per line (rdma wraps its line with indents).
rdma statistic show link sroce0/1 2>&1 | xargs -n2 | sed 's/^/#   /'
# What user space left behind (kernel-owned objects show "comm [name]").
res=$(rdma resource show qp link sroce0/1; rdma resource show cq dev sroce0;
	rdma resource show mr dev sroce0; rdma resource show pd dev sroce0
	rdma resource show srq dev sroce0)
printf '%s\n' "$res" | sed 's/^/# resource: /'
t "no QP, CQ, MR, PD or SRQ of user space left in the kernel" \
	test -z "$(printf '%s\n' "$res" | grep -v 'comm \[')"
t "rdma link delete sroce1, ip link del d0" bash -c \
	'rdma link delete sroce1 && ip link del d0'
t "rdma link delete sroce0" rdma link delete sroce0
t "rmmod sroce" rmmod sroce
kmemleak_check
echo "# rc-errors.sh took $((SECONDS - T0)) s"
finish
