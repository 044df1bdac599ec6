#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest side of scripts/bench.sh: perf.sh DRIVER one|two
# Creates the device with DRIVER (sroce, rxe or siw: scripts/siw.sh builds
# it) and runs perftest: ib_write_bw, ib_read_bw, ib_send_bw at 64 KiB and
# ib_send_lat, ib_write_lat at 2 and 64 bytes, connected through rdma_cm
# (-R; siw is iWARP, which has no other way) to the guest's IPv4 address.
#   one  one guest, server and client on the same device (the client
#        connects to the guest's own address, so RoCE loops back inside it)
#   two  two guests, server on VM1, client on VM0
# VM0 writes lines to $SROCE_OUT/bench.txt:
#   TEST SIZE SETUP DRIVER METRIC VALUE
# METRIC is bw_avg (MB/s as perftest prints it, MiB/s really) and msg_rate
# (Mpps) of a bandwidth run; lat_typ, lat_avg, lat_p99 and lat_p999 (usec)
# of a latency run; and for every perftest run the change of the device's
# counters over the run, summed over the guests: retrans (sroce:
# retransmits; rdma_rxe: completer_retry_err, which counts retries, not
# packets), oos (sroce: rx_out_of_sequence; rdma_rxe: out_of_seq_request),
# rnr (RNR NAKs sent and received; rdma_rxe: send_rnr_err + rcvd_rnr_err),
# nic_drops (eth0's rx_dropped + tx_dropped; siw has no counters but
# these) and, sroce only (rdma_rxe has no such counters), drops (tx_drops
# and every rx_drop_*), txdrops (tx_drops), timeouts (ack_timeouts), cuts
# (window_cuts), rewinds and work (tx_work_runs). A run that failed
# gives "TEST SIZE SETUP DRIVER fail CAUSE" (exit=N, no-figure, setup,
# first-run-failed, never-connected), never a number. When the first run fails the rest
# are not tried.
# Besides perftest's tools, a run's TOOL may be
#   ib_*_bw-qN  that tool with -q N (N QPs)
#   ib_*-gid    that tool connected without rdma_cm (args below)
#   tcp_bw, udp_bw  qperf over TCP or UDP with SIZE-byte messages (a qperf
#        server on VM1; in one guest on the guest itself, over loopback),
#        bw_avg converted to MiB/s like perftest's (udp_bw: the receiver's)
#   udp_lat  qperf's UDP latency with SIZE-byte messages, the same server:
#        lat_typ in usec, half a round trip like perftest's (what the link
#        and the two network stacks cost, with no RDMA)
#   memcpy  tools/sroce-memcpy on VM0: memcpy(3) in SIZE-byte blocks, MiB/s
#   cmscale  two guests: SIZE rdma_cm connections from VM0 to a listener
#        on VM1 (tools/sroce-cmscale), each side's process in a memory
#        cgroup of its own: conn_per_s, connect_s, teardown_s, and VM0's
#        kernel memory per connected QP (slab_kib_qp, vmalloc_kib_qp,
#        memfree_kib_qp, memcg_kib_qp), limited by BENCH_SCALE_TIMEOUT
#        (default 600) s
# BENCH_SECS (default 5) is the length of a bandwidth run, BENCH_ITERS
# (default 1000) the iterations of a latency run, BENCH_TIMEOUT (default
# 60) the limit of any one run. BENCH_RUNS ("TOOL SIZE,TOOL SIZE,...")
# replaces the runs above (set but empty: none of them). The runs of
# every tool in BENCH_SWEEP_TOOLS at every size in BENCH_SWEEP_SIZES (both
# space-separated; none by default) follow, BENCH_SWEEP_SECS (default 2)
# seconds each. BENCH_MTU sets eth0's MTU before the device is created.
# BENCH_LOAD_GUEST=N runs N CPU-bound processes beside the runs.
# BENCH_SHOW=1 (two guests; scripts/demo.sh) also shows, in
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
# The limit of a scale run (more than 8 QPs, cmscale): setting up and
# tearing down thousands of connections takes minutes under TCG.
SCALE_LIMIT=${BENCH_SCALE_TIMEOUT:-600}
# limit TOOL: the time one run of TOOL may take.
limit() {
	if [[ $1 == cmscale || $1 =~ -q([0-9]+) && ${BASH_REMATCH[1]} -gt 8 ]]; then
		echo "$SCALE_LIMIT"
	else
		echo "$LIMIT"
	fi
}
me=$SROCE_VM_INDEX
out=$SROCE_OUT/bench.txt
: >"$out"

IFS=, read -ra RUNS <<<"${BENCH_RUNS-ib_write_bw 65536,ib_read_bw 65536,ib_send_bw 65536,ib_send_lat 2,ib_send_lat 64,ib_write_lat 2,ib_write_lat 64}"
# The sweep: every tool of BENCH_SWEEP_TOOLS at every size of
# BENCH_SWEEP_SIZES, but for a run already in RUNS (scripts/bench.sh makes
# the same list, to collect them).
SWEEP=() runs_csv=,$(IFS=,; echo "${RUNS[*]}"),
for t in ${BENCH_SWEEP_TOOLS:-}; do
	for z in ${BENCH_SWEEP_SIZES:-}; do
		[[ $runs_csv == *",$t $z,"* ]] || SWEEP+=("$t $z")
	done
done
SWEEP_SECS=${BENCH_SWEEP_SECS:-2}
# Every run and its length (bandwidth runs).
ALL=() ALL_SECS=()
for r in "${RUNS[@]}"; do ALL+=("$r") ALL_SECS+=("$SECS"); done
for r in "${SWEEP[@]}"; do ALL+=("$r") ALL_SECS+=("$SWEEP_SECS"); done
SHOW=${BENCH_SHOW:-0}
[ "$SETUP" = two ] || SHOW=0
# show CMD...: run CMD, its command line and output in show.log (VM0).
show() {
	[ "$me" = 0 ] || return 0
	{ echo "\$ $*"; "$@" 2>&1; } | tee -a "$SROCE_OUT/show.log"
}

record() { [ "$me" != 0 ] || echo "$*" >>"$out"; }
# record_fail TOOL SIZE CAUSE: CAUSE one word, e.g. exit=1.
record_fail() { record "$1 $2 $SETUP $DRIVER fail $3"; }

# parse TOOL SIZE LOG: the result lines for one perftest client output.
parse() {
	local tool=$1 size=$2 log=$3
	case $tool in
	*_bw)
		# #bytes #iterations BW peak BW average MsgRate
		awk -v s="$size" '/#bytes/ { h = 1; next }
			h && $1 == s { print "bw_avg", $4; print "msg_rate", $5; exit }' "$log" ;;
	*_lat)
		# #bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9%
		# Only numbers: an uncalibrated clock prints inf.
		awk -v s="$size" '/#bytes/ { h = 1; next }
			h && $1 == s && $5 ~ /^[0-9.]+$/ && $6 ~ /^[0-9.]+$/ {
				print "lat_typ", $5; print "lat_avg", $6
				if ($8 ~ /^[0-9.]+$/) print "lat_p99", $8
				if ($9 ~ /^[0-9.]+$/) print "lat_p999", $9 }
			h && $1 == s { exit }' "$log" ;;
	esac
}

# args TOOL SIZE SECS: the perftest options of one run (same on both
# sides). TOOL may end in -qN (N QPs) and in -gid: perftest then connects
# through its own TCP exchange to the IPv4 RoCE GID (-x) instead of
# rdma_cm, and sets the QP's READ depths itself (not for siw, which is
# iWARP).
args() {
	local q='' cm=-R p parts
	IFS=- read -ra parts <<<"$1"
	for p in "${parts[@]:1}"; do
		case $p in
		q[0-9]*) q="-q ${p#q}" ;;
		gid) cm="-x $(gid_index "$DEV" v4)" ;;
		esac
	done
	case $1 in
	*_bw*)
		# More than 8 QPs (the scale set): perftest's send CQ holds
		# every QP's send queue, and rdma_rxe's CQ at most 32767
		# entries, so 16384 WRs in all (fewer a QP above 128 QPs);
		# and a number of messages, not a duration: with 256 QPs
		# perftest's -D run measured nothing (0 iterations, 0.00
		# MB/s) with either driver. 2048 messages in all, 5 a QP at
		# least (perftest's least), a multiple of the depth when more
		# than it: with 5 messages at a depth of 4 the client never
		# ended, every message sent and acknowledged.
		local n=${q#-q }
		if [ -n "$q" ] && [ "$n" -gt 8 ]; then
			local t=$((16384 / n)) it=$(((2048 + n - 1) / n))
			[ "$t" -le 128 ] || t=128
			[ "$it" -ge 5 ] || it=5
			[ "$it" -le "$t" ] || it=$(((it + t - 1) / t * t))
			echo "-d $DEV $cm -F -s $2 $q -t $t -n $it"
			return
		fi
		echo "-d $DEV $cm -F -s $2 -D $3 $q" ;;
	*_lat*) echo "-d $DEV $cm -F -s $2 -n $ITERS" ;;
	esac
}

# local_run TOOL SIZE SECS LOG: server and client on this guest.
PORT=21000
local_run() {
	local tool=$1 size=$2 secs=$3 log=$4 pid rc a lim
	lim=$(limit "$tool")
	read -ra a <<<"$(args "$tool" "$size" "$secs")"
	tool=${tool%%-*}
	PORT=$((PORT + 1))
	timeout -k 3 $((lim + 30)) "$tool" "${a[@]}" -p $PORT >"$log.server" 2>&1 &
	pid=$!
	if ! pair_wait_listening $PORT $pid; then
		echo "# server not listening" >>"$log"
		kill $pid 2>/dev/null
		wait $pid
		return 1
	fi
	timeout -k 3 "$lim" "$tool" "${a[@]}" -p $PORT "$MY_V4" >"$log" 2>&1
	rc=$?
	wait_for 5 bash -c "! kill -0 $pid" || kill $pid 2>/dev/null
	wait $pid
	return $rc
}

# snap FILE: the device's counters and eth0's drops, "NAME VALUE" a line.
snap() {
	local f
	{
		for f in /sys/class/infiniband/"$DEV"/ports/1/hw_counters/*; do
			[ -r "$f" ] && echo "${f##*/} $(cat "$f")"
		done
		echo "eth_rx_dropped $(cat /sys/class/net/eth0/statistics/rx_dropped)"
		echo "eth_tx_dropped $(cat /sys/class/net/eth0/statistics/tx_dropped)"
	} >"$1" 2>/dev/null
}

# counters BEFORE AFTER [BEFORE AFTER]: the metrics of the counters' change
# (summed over the guests), by the driver's own names.
counters() {
	awk -v drv="$DRIVER" 'FILENAME ~ /before/ { d[$1] -= $2; next }
		{ d[$1] += $2 }
		END {
			if (drv == "sroce") {
				print "retrans", d["retransmits"] + 0
				print "oos", d["rx_out_of_sequence"] + 0
				drops = d["tx_drops"]
				for (k in d) if (k ~ /^rx_drop_/) drops += d[k]
				print "drops", drops + 0
				print "txdrops", d["tx_drops"] + 0
				print "timeouts", d["ack_timeouts"] + 0
				print "cuts", d["window_cuts"] + 0
				print "rewinds", d["rewinds"] + 0
				print "work", d["tx_work_runs"] + 0
				print "rnr", d["rx_rnr_naks"] + d["tx_rnr_naks"]
			} else if (drv == "rxe") {
				print "retrans", d["completer_retry_err"] + 0
				print "oos", d["out_of_seq_request"] + 0
				print "rnr", d["rcvd_rnr_err"] + d["send_rnr_err"]
			}
			print "nic_drops", d["eth_rx_dropped"] + d["eth_tx_dropped"]
		}' "$@"
}

# qperf_run TEST SIZE SECS HOST LOG: one qperf run against the server on
# HOST; prints "bw_avg MiB/s" (qperf's MB are 10^6 bytes), or for udp_lat
# "lat_typ usec".
QPORT=19765
qperf_run() {
	local test=$1 size=$2 secs=$3 host=$4 log=$5 key=bw
	[ "$test" = udp_bw ] && key=recv_bw
	[ "$test" = udp_lat ] && key=latency
	timeout -k 3 "$LIMIT" qperf -lp "$QPORT" -to 30 -t "$secs" -m "$size" \
		"$host" "$test" >"$log" 2>&1 || return 1
	awk -v k="$key" '$1 == k && $2 == "=" && k == "latency" {
		f = $4 ~ /^ns/ ? 1e-3 : $4 ~ /^ms/ ? 1e3 : $4 ~ /^sec/ ? 1e6 : 1
		printf "lat_typ %.2f\n", $3 * f; exit }
	$1 == k && $2 == "=" {
		f = $4 ~ /^GB/ ? 1e9 : $4 ~ /^MB/ ? 1e6 : $4 ~ /^KB/ ? 1e3 : 1
		printf "bw_avg %.2f\n", $3 * f / 1048576; exit }' "$log" | grep .
}

# --- device ----------------------------------------------------------------
ok=1
if [ -n "${BENCH_MTU:-}" ]; then
	ip link set eth0 mtu "$BENCH_MTU" || ok=0
fi
# rdma_cm resolves a RoCE device by its IPv4 GID: it must be there.
modprobe rdma_ucm
if setup_rdma "$DRIVER" && { [ "$DRIVER" = siw ] || gid_index "$DEV" v4 >/dev/null; }; then
	echo "# $DRIVER: $DEV up"
else
	echo "# $DRIVER: could not create the device" >&2
	ok=0
fi
# A qperf server for the tcp_bw/udp_bw/udp_lat runs: on VM1, or on this
# guest alone.
qpid=''
if [[ ",${ALL[*]}" == *[,\ ][tu][cd]p_[bl][wa]* ]] && { [ "$SETUP" = one ] || [ "$me" = 1 ]; }; then
	qperf -lp "$QPORT" >"$SROCE_OUT/qperf-server.log" 2>&1 &
	qpid=$!
	pair_wait_listening "$QPORT" "$qpid" || {
		echo "# qperf server not listening on $QPORT" >&2
		ok=0
	}
fi
if [ "$SETUP" = two ]; then
	mkdir -p "$RDMA_SYNC"
	echo $ok >"$RDMA_SYNC/setup.$me"
	wait_for 60 ping -c1 -W1 "$PEER_V4" || ok=0
	barrier setup 300 || ok=0
	[ "$(first_line "$RDMA_SYNC/setup.$RDMA_PEER")" = 1 ] || ok=0
fi
if [ $ok = 0 ]; then
	for r in "${ALL[@]}"; do record "$r $SETUP $DRIVER fail setup"; done
	[ -z "$qpid" ] || kill "$qpid"
	exit 1
fi

if [ "$SHOW" = 1 ]; then
	: >"$SROCE_OUT/show.log"
	show ibv_devices
	show ibv_devinfo -d "$DEV"
	show ip -br link show eth0
fi

# --- runs ------------------------------------------------------------------
mkdir -p "$RDMA_LOGS" "$RDMA_SYNC"
# cmscale's memory cgroup (cgroup2, the memory controller enabled below
# the root).
CMSCALE_CG=/sys/fs/cgroup/sroce-cmscale
if [[ ",${ALL[*]}" == *[,\ ]cmscale\ * ]]; then
	[ -e /sys/fs/cgroup/cgroup.controllers ] ||
		mount -t cgroup2 none /sys/fs/cgroup
	echo +memory >/sys/fs/cgroup/cgroup.subtree_control
	mkdir -p "$CMSCALE_CG"
fi
# BENCH_LOAD_GUEST=N (bench.sh --load guest:N): N CPU-bound processes at
# normal priority in this guest through every run, a busy machine.
hogs=()
for ((h = 0; h < ${BENCH_LOAD_GUEST:-0}; h++)); do
	sh -c 'while :; do :; done' &
	hogs+=($!)
done
[ ${#hogs[@]} = 0 ] || echo "# guest load: ${#hogs[@]} CPU-bound processes"
# peer_hung: VM0's last pair ended without the server's status, which
# pair waits 60 s for (the server is killed 5 s after the client): VM1's
# server did not exit even when killed, stuck in its driver's teardown.
# Nothing more can run with that guest; its later runs fail unrun.
peer_hung() {
	[ "$SETUP" = two ] && [ "$me" = 0 ] && [ ! -e "$RDMA_SYNC/$RDMA_SEQ.srv" ]
}
first=1 failed=0 anyfail=0 hung=0
for i in "${!ALL[@]}"; do
	read -r tool size <<<"${ALL[$i]}"
	secs=${ALL_SECS[$i]}
	if [ $hung = 1 ]; then
		record_fail "$tool" "$size" peer-hung	# skipped
		continue
	fi
	if [ $failed = 1 ]; then
		record_fail "$tool" "$size" first-run-failed	# skipped
		continue
	fi
	name="$tool $size $SETUP $DRIVER"
	log=$RDMA_LOGS/$tool-$size.log
	res='' rc=0
	case $tool in
	tcp_bw | udp_bw | udp_lat | memcpy)
		# VM0 alone; VM1 (whose qperf server serves) waits for it.
		if [ "$me" = 0 ]; then
			if [ "$tool" = memcpy ]; then
				res=$("$SROCE_TREE/tools/sroce-memcpy" "$size" "$secs" 2>"$log" |
					awk '$1 == "MiB/s" { print "bw_avg", $2 }')
			elif [ "$SETUP" = one ]; then
				res=$(qperf_run "$tool" "$size" "$secs" "$MY_V4" "$log")
			else
				res=$(qperf_run "$tool" "$size" "$secs" "$PEER_V4" "$log")
			fi
			[ -n "$res" ] || rc=1
		fi
		[ "$SETUP" = one ] || barrier baseline $((LIMIT + 60))
		;;
	cmscale)
		# Each side's process in a memory cgroup of its own (made
		# below), whose memory.current it reads.
		if [ "$SETUP" != two ]; then
			[ "$me" != 0 ] || record_fail "$tool" "$size" two-guests-only
			continue
		fi
		# shellcheck disable=SC2016 # for that sh to expand
		cg=(sh -c 'echo $$ >"$0" && exec "$@"' "$CMSCALE_CG/cgroup.procs"
			"$SROCE_TREE/tools/sroce-cmscale")
		lim=$(limit "$tool")
		pair "$name" 1 "$lim" "${cg[@]}" -s -b "$MY_V4" -p @PORT@ -n "$size" -t "$lim" -- \
			"${cg[@]}" -c "$PEER_V4" -p @PORT@ -n "$size" -t "$lim"
		rc=1
		! pair_both_ok || rc=0
		! peer_hung || hung=1
		[ "$rc" != 0 ] || [ "$me" != 0 ] ||
			res=$(awk '$1 ~ /^(conn_per_s|connect_s|teardown_s|[a-z]+_kib_qp)$/ { print $1, $2 }' "$PAIR_LOG")
		;;
	*)
		# Again when perftest on either side could not calibrate its
		# cycle counter (TCG timing noise; it may still exit 0, with
		# every latency "inf"), up to 3 tries, or lost perftest's own
		# rdma_cm race (its client connects the test QP before the
		# server listens again, is rejected and crashes in librdmacm:
		# linux-rdma/perftest#93, tests/guest/rc.sh), up to 8, judged
		# from both sides' logs. The counters are read around all
		# tries; each repeat goes to the log with its cause.
		snap "$RDMA_SYNC/ctr.$i.before.$me"
		for try in 1 2 3 4 5 6 7 8; do
			if [ "$SETUP" = one ]; then
				log=$RDMA_LOGS/$tool-$size.$try.log
				local_run "$tool" "$size" "$secs" "$log"
				rc=$?
				logs=("$log" "$log.server")
				snap "$RDMA_SYNC/ctr.$i.after.$me"
			else
				read -ra a <<<"$(args "$tool" "$size" "$secs")"
				pair "$name" 1 "$(limit "$tool")" "${tool%%-*}" "${a[@]}" -p @PORT@ -- \
					"${tool%%-*}" "${a[@]}" -p @PORT@ "$PEER_V4"
				rc=$(pair_client_rc)
				id=$(printf '%03d' "$RDMA_SEQ")
				if peer_hung; then
					hung=1
					break
				fi
				snap "$RDMA_SYNC/ctr.$i.after.$me"
				barrier ran 120	# both logs (and counters) are complete
				logs=("$(dirname "$SROCE_SHARED")"/vm*/logs/"$id"-*.log)
				log=$(ls "$RDMA_LOGS/$id"-*.client.log 2>/dev/null)
			fi
			why=''
			if grep -qs 'Correlation coefficient r^2' "${logs[@]}"; then
				[ "$try" -ge 3 ] ||
					why="perftest could not calibrate its clock (TCG timing)"
			elif grep -qs 'RDMA_CM_EVENT_REJECTED; error: 8\.' "${logs[@]}"; then
				why="perftest's client connected before the server listened (perftest#93)"
			fi
			if [ -z "$why" ] || [ "$try" = 8 ]; then
				break
			fi
			echo "# $name: $why; once more"
		done
		[ "$rc" != 0 ] || [ "$me" != 0 ] || res=$(parse "${tool%%-*}" "$size" "$log")
		if [ -n "$res" ]; then
			res+=$'\n'$(counters "$RDMA_SYNC/ctr.$i".{before,after}.*)
		fi
		;;
	esac
	if [ $hung = 1 ]; then
		# Its figure, if the client printed one, is not kept: the
		# run did not end.
		record_fail "$tool" "$size" server-hung
		echo "# $name: the server on VM1 never exited, even killed"
		anyfail=1
		continue
	fi
	if [ "$me" = 0 ]; then
		if [ -n "$res" ]; then
			while read -r metric value; do
				record "$tool $size $SETUP $DRIVER $metric $value"
			done <<<"$res"
			echo "# $name: $(echo "$res" | tr '\n' ' ')"
		else
			if [ "$rc" = 0 ]; then
				record_fail "$tool" "$size" no-figure
			elif [ "$rc" = 124 ] &&
				grep -qs "type RC state RESET .*comm ${tool%%-*}" "$log"; then
				# Killed at the limit with its QP never
				# connected: perftest's client spinning after
				# a connect that failed (perftest#93, seen
				# with siw's slower iWARP listen).
				record_fail "$tool" "$size" never-connected
			else
				record_fail "$tool" "$size" "exit=$rc"
			fi
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
[ -z "$qpid" ] || kill "$qpid"
echo "# guest load average after the runs: $(cat /proc/loadavg)"
[ ${#hogs[@]} = 0 ] || kill "${hogs[@]}"
if [ "$SHOW" = 1 ] && [ $hung = 0 ]; then
	# rdma_rxe's rping server can hang in its teardown after serving
	# every ping (tests/guest/rc.sh); the client's verdict is the one
	# shown.
	pair "rping -C 20 -S 4096 -V (the client verifies every buffer)" 1 \
		"$LIMIT" "$RPING" -s -a "$MY_V4" -p @PORT@ -C 20 -S 4096 -- \
		"$RPING" -c -a "$PEER_V4" -p @PORT@ -C 20 -S 4096 -V -v
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
[ "$SETUP" = one ] || [ $hung = 1 ] || barrier finished 300
rdma link delete "$DEV"
exit $anyfail
