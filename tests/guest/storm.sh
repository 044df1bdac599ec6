#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Storms against one guest's sroce0 while another connection between the
# same guests must keep its traffic:
# storm.sh DRV0 DRV1 [VICTIM_BYTES [STORMS]]
# (DRVn: sroce or rxe for guest n, to compare with rdma_rxe; STORMS the
# storms to run, comma-separated, default rnr,read,ud).
#
# Guest 0 storms guest 1, one storm after another, each on QPs of its
# own through perftest (C, so the storm is as fast as the guest can go):
#   rnr   ib_send_bw -q 4 against a server that keeps one receive WQE
#         per QP (-r 1): the sender's 128-deep queues meet RNR NAKs
#         without end (perftest's rnr_retry is 7, infinite);
#   read  ib_read_bw -q 4 -s 64K at the device's max_qp_rd_atom (-o 128):
#         guest 1's responder always holds max_dest_rd_atomic READs per
#         QP;
#   ud    ib_send_bw -c UD -q 4 unpaced, at the path MTU: more datagrams
#         than the server's receive queues take, the rest dropped.
# During each, an integrity pair (tools/sroce-integrity, every byte
# checked) moves VICTIM_BYTES (default 64M) from guest 0 to guest 1 and
# back on a QP of its own; the storm is stopped when the victim is done.
# Checked: the victim is clean each time (the storm did not starve it or
# corrupt it), the storm happened (guest 1's counters: RNR NAKs sent,
# READ responses sent, datagrams received), guest 1's available memory
# never fell by more than STORM_MEM_MIB (96) below what it was before, and
# after each storm every QP of the storm is gone on both sides.
set -u
here=$(dirname "$0")
# shellcheck source=tests/guest/lib.sh
. "$here/lib.sh"

drvs=("${1:?DRV0}" "${2:?DRV1}")
VBYTES=${3:-64M}
STORMS=,${4:-rnr,read,ud},
STORM_MEM_MIB=${STORM_MEM_MIB:-96}
itool=$SROCE_TREE/tools/sroce-integrity
sdir=$SROCE_OUT/storm
mkdir -p "$sdir"

drv=${drvs[RDMA_ME]}
DEV=${drv}0
t "$drv: rdma link add $DEV, port active" setup_rdma "$drv"
t "modprobe rdma_ucm" modprobe rdma_ucm
GI=$(gid_index "$DEV" v4) || not_ok "RoCE v2 GID of $MY_V4 on $DEV"
t "peer reachable over IPv4" wait_for 60 ping -c1 -W1 "$PEER_V4"

mem_avail_kib() { awk '/^MemAvailable:/ { print $2 }' /proc/meminfo; }
# QPs of user processes on DEV (the kernel's own, QP1's, stay).
qp_count() { rdma resource show qp 2>/dev/null | grep "link $DEV/" | grep -vc 'comm \['; }
# The storm's own measure: a report line (perftest prints one every 2 s
# with --run_infinitely) with a non-zero average bandwidth.
storm_ran() {
	awk '$1 ~ /^[0-9]+$/ && NF >= 5 && $4 + 0 > 0 { n++ } END { exit !n }' "$1"
}

# Guest 1 samples its available memory every half second into FILE until
# STOP exists; prints the lowest value seen.
mem_watch() {
	local file=$1 stop=$2 low=
	: >"$file"
	while [ ! -e "$stop" ]; do
		mem_avail_kib >>"$file"
		sleep 0.5
	done
	sort -n "$file" | head -n1
}

# storm NAME COUNTER PERFTEST_ARGS...: one storm with the victim beside it.
storm() {
	local name=$1 cnt=$2 n0 n1 base low srv cli vsrv port
	shift 2
	[[ $STORMS == *,$name,* ]] || return 0
	# (line-buffered: the storm is killed, its reports must be out)
	local perf=(stdbuf -oL "$@" -d "$DEV" -x "$GI" --run_infinitely -D 2 -F)
	barrier "$name-start" 300 || { not_ok "$name: both guests at the start"; return; }
	port=$((18600 + RDMA_SEQ))
	if [ "$RDMA_ME" = 1 ]; then
		base=$(mem_avail_kib)
		[ "$drv" != sroce ] || n0=$(counter "$cnt")
		rm -f "$sdir/$name.stop"
		mem_watch "$sdir/$name.mem" "$RDMA_SYNC/$name.victim-done" >"$sdir/$name.low" &
		"${perf[@]}" -p "$port" >"$sdir/$name.server.log" 2>&1 &
		srv=$!
		timeout 600 "$itool" -s -b "$MY_V4" -p $((port + 100)) \
			--listen-timeout 300 --timeout 120 >"$sdir/$name.victim-server.log" 2>&1 &
		vsrv=$!
		wait_for 60 grep -q 'server listening' "$sdir/$name.victim-server.log"
		touch "$RDMA_SYNC/$name.listening"
		if wait "$vsrv"; then
			ok "$name storm: victim server clean ($(grep -h '^integrity: ops' "$sdir/$name.victim-server.log"))"
		else
			not_ok "$name storm: victim server clean"
			tail -n 5 "$sdir/$name.victim-server.log" | sed 's/^/#   /'
		fi
		wait_for 300 test -e "$RDMA_SYNC/$name.victim-done"
		kill -9 "$srv" 2>/dev/null
		wait "$srv" 2>/dev/null
		wait
		low=$(cat "$sdir/$name.low")
		if [ "$drv" = sroce ]; then
			n1=$(counter "$cnt")
			t "$name storm: $cnt grew (+$((n1 - n0)))" test $((n1 - n0)) -gt 100
		fi
		t "$name storm: available memory fell by $(((base - low) / 1024)) MiB at most (limit $STORM_MEM_MIB)" \
			test $(((base - low) / 1024)) -le "$STORM_MEM_MIB"
	else
		wait_for 120 test -e "$RDMA_SYNC/$name.listening"
		"${perf[@]}" -p "$port" "$PEER_V4" >"$sdir/$name.client.log" 2>&1 &
		cli=$!
		# The storm first, then the victim beside it.
		sleep 3
		if timeout 600 "$itool" -c "$PEER_V4" -p $((port + 100)) \
			--bytes "$VBYTES" --max-size 256K --depth 8 --seed "$port" \
			--timeout 120 >"$sdir/$name.victim.log" 2>&1; then
			ok "$name storm: victim client clean ($(grep -h '^integrity: ops' "$sdir/$name.victim.log"))"
		else
			not_ok "$name storm: victim client clean"
			tail -n 5 "$sdir/$name.victim.log" | sed 's/^/#   /'
		fi
		t "$name storm: the storm ran beside the victim" alive "$cli"
		touch "$RDMA_SYNC/$name.victim-done"
		kill -9 "$cli" 2>/dev/null
		wait "$cli" 2>/dev/null
		# Read once perftest is gone: on 7.2 a read of a 9p file at its
		# end fails with ENODATA when a write from this guest extends
		# the file meanwhile (v9fs_issue_read() tests HIT_EOF against
		# the i_size that write just raised; testing.rst).
		t "$name storm: perftest reported traffic" storm_ran "$sdir/$name.client.log"
	fi
	barrier "$name-end" 300 || not_ok "$name: both guests at the end"
	t "$name storm: every QP of the storm destroyed" wait_for 30 test "$(qp_count)" -eq 0
	# perftest's last report and anything it said about errors
	for f in "$sdir/$name".server.log "$sdir/$name".client.log; do
		[ -e "$f" ] || continue
		grep -iE 'error|fail|unable|couldn' "$f" | head -n 3 | sed "s/^/# ${f##*/}: /"
		awk '$1 ~ /^[0-9]+$/ && NF >= 5' "$f" | tail -n 1 | sed "s/^/# ${f##*/}: /"
	done
}

# -Q 1: one completion per SEND. perftest counts a completion as cq_mod
# (100 by default) messages, so at the rate RNR NAKs leave (240 SENDs
# in 2 s over the 4 QPs in a 6.1 check) its every report said 0.
storm rnr tx_rnr_naks ib_send_bw -q 4 -r 1 -s 1024 -Q 1
storm read tx_packets ib_read_bw -q 4 -s 65536 -o 128
storm ud rx_packets ib_send_bw -c UD -q 4

echo "# counters:"
rdma statistic show link "$DEV/1" | xargs -n2 | sed "s/^/#   /"
teardown_rdma "$drv"
kmemleak_check
finish
