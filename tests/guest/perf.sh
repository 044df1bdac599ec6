#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest side of scripts/bench.sh: perf.sh DRIVER one|two
# Creates the device with DRIVER (sroce or rxe) and runs perftest:
# ib_write_bw, ib_read_bw, ib_send_bw at 64 KiB and ib_send_lat,
# ib_write_lat at 2 and 64 bytes, over the IPv4 GID.
#   one  one guest, server and client on the same device (the client
#        connects to the guest's own address, so RoCE loops back inside it)
#   two  two guests, server on VM1, client on VM0
# VM0 writes one line per run to $SROCE_OUT/bench.txt:
#   TEST SIZE SETUP DRIVER METRIC VALUE
# METRIC is bw_avg (MB/s as perftest prints it, MiB/s really), lat_typ and
# lat_avg (usec). A run that failed gives "TEST SIZE SETUP DRIVER fail -",
# never a number. When the first run fails the rest are not tried.
# BENCH_SECS (default 5) is the length of a bandwidth run, BENCH_ITERS
# (default 1000) the iterations of a latency run, BENCH_TIMEOUT (default
# 60) the limit of any one run. BENCH_RUNS ("TOOL SIZE,TOOL SIZE,...")
# replaces the runs above, BENCH_MTU sets eth0's MTU before the device is
# created. BENCH_SHOW=1 (two guests; scripts/demo.sh) also shows, in
# $SROCE_OUT/show.log of VM0, the device through rdma-core first, and
# after the runs an rping whose client verifies every buffer and the
# device's counters.
set -u
here=$(dirname "$0")
# shellcheck source=tests/guest/lib.sh
. "$here/lib.sh"

DRIVER=${1:?usage: perf.sh sroce|rxe one|two}
SETUP=${2:?usage: perf.sh sroce|rxe one|two}
SECS=${BENCH_SECS:-5}
ITERS=${BENCH_ITERS:-1000}
LIMIT=${BENCH_TIMEOUT:-60}
me=$SROCE_VM_INDEX
out=$SROCE_OUT/bench.txt
: >"$out"

IFS=, read -ra RUNS <<<"${BENCH_RUNS:-ib_write_bw 65536,ib_read_bw 65536,ib_send_bw 65536,ib_send_lat 2,ib_send_lat 64,ib_write_lat 2,ib_write_lat 64}"
SHOW=${BENCH_SHOW:-0}
[ "$SETUP" = two ] || SHOW=0
# show CMD...: run CMD, its command line and output in show.log (VM0).
show() {
	[ "$me" = 0 ] || return 0
	{ echo "\$ $*"; "$@" 2>&1; } | tee -a "$SROCE_OUT/show.log"
}

record() { [ "$me" != 0 ] || echo "$*" >>"$out"; }
record_fail() { record "$1 $2 $SETUP $DRIVER fail -"; }

# parse TOOL SIZE LOG: the result lines for one perftest client output.
parse() {
	local tool=$1 size=$2 log=$3
	case $tool in
	*_bw)
		# #bytes #iterations BW peak BW average MsgRate
		awk -v s="$size" '/#bytes/ { h = 1; next } h && $1 == s { print "bw_avg", $4; exit }' "$log" ;;
	*_lat)
		# #bytes #iterations t_min t_max t_typical t_avg ...
		# Only numbers: an uncalibrated clock prints inf.
		awk -v s="$size" '/#bytes/ { h = 1; next }
			h && $1 == s && $5 ~ /^[0-9.]+$/ && $6 ~ /^[0-9.]+$/ {
				print "lat_typ", $5; print "lat_avg", $6 }
			h && $1 == s { exit }' "$log" ;;
	esac
}

# args TOOL SIZE: the perftest options of one run (same on both sides).
args() {
	case $1 in
	*_bw) echo "-d $DEV -x $G4 -F -s $2 -D $SECS" ;;
	*_lat) echo "-d $DEV -x $G4 -F -s $2 -n $ITERS" ;;
	esac
}

# local_run TOOL SIZE LOG: server and client on this guest.
PORT=21000
local_run() {
	local tool=$1 size=$2 log=$3 pid rc a
	read -ra a <<<"$(args "$tool" "$size")"
	PORT=$((PORT + 1))
	timeout -k 3 $((LIMIT + 30)) "$tool" "${a[@]}" -p $PORT >"$log.server" 2>&1 &
	pid=$!
	if ! pair_wait_listening $PORT $pid; then
		echo "# server not listening" >>"$log"
		kill $pid 2>/dev/null
		wait $pid
		return 1
	fi
	timeout -k 3 "$LIMIT" "$tool" "${a[@]}" -p $PORT "$MY_V4" >"$log" 2>&1
	rc=$?
	wait_for 5 bash -c "! kill -0 $pid" || kill $pid 2>/dev/null
	wait $pid
	return $rc
}

# --- device ----------------------------------------------------------------
ok=1
if [ -n "${BENCH_MTU:-}" ]; then
	ip link set eth0 mtu "$BENCH_MTU" || ok=0
fi
if setup_rdma "$DRIVER" && G4=$(gid_index "$DEV" v4); then
	echo "# $DRIVER: $DEV up, IPv4 GID at index $G4"
else
	echo "# $DRIVER: could not create the device" >&2
	ok=0
fi
if [ "$SETUP" = two ]; then
	mkdir -p "$RDMA_SYNC"
	echo $ok >"$RDMA_SYNC/setup.$me"
	wait_for 60 ping -c1 -W1 "$PEER_V4" || ok=0
	barrier setup 300 || ok=0
	[ "$(first_line "$RDMA_SYNC/setup.$RDMA_PEER")" = 1 ] || ok=0
fi
if [ $ok = 0 ]; then
	for r in "${RUNS[@]}"; do record "$r $SETUP $DRIVER fail -"; done
	exit 1
fi

if [ "$SHOW" = 1 ]; then
	: >"$SROCE_OUT/show.log"
	show ibv_devices
	show ibv_devinfo -d "$DEV"
	show ip -br link show eth0
fi

# --- runs ------------------------------------------------------------------
mkdir -p "$RDMA_LOGS"
first=1 failed=0 anyfail=0
for r in "${RUNS[@]}"; do
	read -r tool size <<<"$r"
	if [ $failed = 1 ]; then
		record_fail "$tool" "$size"	# the first run failed: skip
		continue
	fi
	name="$tool $size $SETUP $DRIVER"
	# Again (up to 3 tries) when perftest on either side could not
	# calibrate its cycle counter (TCG timing noise), judged from both
	# sides' logs: it may still exit 0, with every latency "inf".
	for try in 1 2 3; do
		if [ "$SETUP" = one ]; then
			log=$RDMA_LOGS/$tool-$size.$try.log
			local_run "$tool" "$size" "$log"
			rc=$?
			logs=("$log" "$log.server")
		else
			read -ra a <<<"$(args "$tool" "$size")"
			pair "$name" 1 "$LIMIT" "$tool" "${a[@]}" -p @PORT@ -- \
				"$tool" "${a[@]}" -p @PORT@ "$PEER_V4"
			rc=$(pair_client_rc)
			id=$(printf '%03d' "$RDMA_SEQ")
			barrier ran 120	# both logs are complete
			logs=("$(dirname "$SROCE_SHARED")"/vm*/logs/"$id"-*.log)
			log=$(ls "$RDMA_LOGS/$id"-*.client.log 2>/dev/null)
		fi
		if [ $try = 3 ] ||
			! grep -qs 'Correlation coefficient r^2' "${logs[@]}"; then
			break
		fi
		echo "# $name: perftest could not calibrate its clock (TCG timing); once more"
	done
	res=''
	[ "$rc" != 0 ] || [ "$me" != 0 ] || res=$(parse "$tool" "$size" "$log")
	if [ "$me" = 0 ]; then
		if [ -n "$res" ]; then
			while read -r metric value; do
				record "$tool $size $SETUP $DRIVER $metric $value"
			done <<<"$res"
			echo "# $name: $(echo "$res" | tr '\n' ' ')"
		else
			record_fail "$tool" "$size"
			echo "# $name: no result (exit $rc), see $log"
			# (pair has shown the end of the log already)
			if [ "$SETUP" = one ]; then
				tail -n 10 "$log" 2>/dev/null | sed 's/^/#   client: /'
				tail -n 10 "$log.server" 2>/dev/null | sed 's/^/#   server: /'
			fi
		fi
	fi
	[ "$rc" = 0 ] || anyfail=1
	[ "$rc" = 0 ] || [ $first = 0 ] || failed=1
	first=0
done
if [ "$SHOW" = 1 ]; then
	# rdma_rxe's rping server can hang in its teardown after serving
	# every ping (tests/guest/rc.sh); the client's verdict is the one
	# shown.
	pair "rping -C 20 -S 4096 -V (the client verifies every buffer)" 1 \
		"$LIMIT" rping -s -a "$MY_V4" -p @PORT@ -C 20 -S 4096 -- \
		rping -c -a "$PEER_V4" -p @PORT@ -C 20 -S 4096 -V -v
	rc=$(pair_client_rc)
	if [ "$me" = 0 ]; then
		log=$(ls "$RDMA_LOGS/$(printf '%03d' "$RDMA_SEQ")"-*.client.log 2>/dev/null)
		{
			echo "\$ rping -c -a $PEER_V4 -C 20 -S 4096 -V -v   (server on VM1)"
			head -n 3 "$log" 2>/dev/null | cut -c1-76
			echo "... ($(grep -c '^ping data' "$log" 2>/dev/null) pings, exit $rc)"
		} | tee -a "$SROCE_OUT/show.log"
		[ "$rc" = 0 ] || anyfail=1
	fi
	if [ "$me" = 0 ]; then
		# Three "name value" pairs a line (rdma prints one long line).
		{
			echo "\$ rdma statistic show link $DEV/1"
			rdma statistic show link "$DEV/1" | xargs -n2 | paste - - -
		} | tee -a "$SROCE_OUT/show.log"
	fi
fi
[ "$SETUP" = one ] || barrier finished 300
rdma link delete "$DEV"
exit $anyfail
