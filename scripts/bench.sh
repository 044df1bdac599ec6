#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# sroce against rdma_rxe and siw of the same kernel with perftest over
# rdma_cm, in QEMU guests (--kernel 6.1, 6.12 or 7.2: Debian 12's, Debian
# 13's or sid's, each with its own userland; siw built out of tree by
# scripts/siw.sh, as Debian builds none), in one guest (client and server
# on the same device) and between two guests. Each guest boot runs one
# driver in one setup (tests/guest/perf.sh); the drivers take turns in
# ABBA order (round 1 sroce, rxe, siw, round 2 siw, rxe, sroce, ...) for
# --rounds rounds. What
# runs is chosen by --set (sets below). The numbers go to OUT/results.txt
# (ROUND TEST SIZE SETUP DRIVER METRIC VALUE), the table
# (scripts/bench-table.py) to OUT/table.txt and stdout, the host's
# /proc/loadavg before and after each guest to OUT/load.txt. A driver that
# cannot be loaded, or a run that fails, shows "fail", never a number.
#
# Under TCG these numbers compare the drivers on this host at one time;
# they say nothing about hardware speed.
set -uo pipefail
usage() {
	cat >&2 <<'EOF'
usage: bench.sh [--kernel 6.1|6.12|7.2] [--rounds N] [--drivers sroce,rxe,siw]
                [--setups one,two] [--set all|core,base,sweep,qps,scale]
                [--out DIR] [--timeout SEC] [--mtu N]
                [--load idle|host:N|guest:N]
  --kernel   the guests' kernel (default 6.1); every driver runs on it
  --rounds   rounds of every driver in every setup (default 5)
  --drivers  which drivers, in round 1's order (default sroce,rxe,siw)
  --setups   one: one VM, loopback; two: two VMs (default one,two)
  --set      what runs (default $BENCH_SET, else all):
             core   ib_write_bw, ib_read_bw, ib_send_bw at 64 KiB,
                    ib_send_lat and ib_write_lat at 2 and 64 B (with their
                    p99 and p99.9), in every setup
             base   baselines in the same guests, every setup: qperf
                    tcp_bw (64 KiB messages), udp_bw (65507 B, UDP's
                    largest), udp_lat (2 B) and memcpy(3) in 64 KiB
                    blocks (tools/sroce-memcpy)
             sweep  ib_write_bw, ib_send_bw and qperf tcp_bw at 2 B, 8 B,
                    ... 8 MiB (powers of 4 times 2), BENCH_SWEEP_SECS
                    (default 2) s each, in setup two (else the first)
             qps    ib_write_bw 64 KiB with -q 1, 2, 4, 8, in setup one
                    (else the first)
             scale  setup two only, its guests with 2 GiB each:
                    tools/sroce-cmscale with 1024 and
                    4096 rdma_cm connections (connects a second,
                    teardown time, kernel memory per QP), then
                    ib_write_bw 4 KiB with -q 16, 256, 1024 and 4096
                    (2048 messages in all, 5 a QP at least); not in
                    "all"
  --out      results directory (default build/bench/KERNEL, with -MTU
             when --mtu is given)
  --timeout  limit of one VM run, boot included (default 900; 3600
             with the scale set)
  --mtu      the guests' netdev MTU (default: the link's, 1500)
  --load     what else the machine does meanwhile (default idle):
             host:N   N CPU-bound processes on the host from the first
                      boot to the last: the guests' vCPUs lose time to
                      them, as to the neighbours on an oversubscribed
                      hypervisor (steal time)
             guest:N  N CPU-bound processes at normal priority in each
                      guest through its runs: a busy machine
             Every driver runs under the same load; OUT gets -host-N or
             -guest-N
  The guest reads BENCH_SECS (bandwidth run length, default 5), BENCH_ITERS
  (latency iterations, default 1000) and BENCH_TIMEOUT (limit of one
  run, default 60; BENCH_SCALE_TIMEOUT, default 600, for a scale run)
  from the environment of this script, and
  BENCH_RUNS ("TOOL SIZE,TOOL SIZE,...": other core runs than the ones
  above; a perftest TOOL may end in -qN for N QPs, and in -gid to connect
  without rdma_cm, over the IPv4 RoCE GID: not siw), BENCH_SWEEP_TOOLS and
  BENCH_SWEEP_SIZES (space-separated) and BENCH_SHOW=1 (scripts/demo.sh:
  show the device, rping, counters).
  Every perftest run also records the change of the device's retransmit
  and drop counters (tests/guest/perf.sh).
  The chart goes to OUT/table.svg (scripts/bench-plot.py): bandwidth by
  message size when the sweep ran, else the table's bars.
  Duration on 2 cores under TCG (6.1, estimated from shorter runs): the
  default (5 rounds, every set, both setups: 20 guest boots, about 3 min
  each in one guest, about 5 between two) about 80 minutes, more on
  a loaded host; --set core --rounds 1 about 7 minutes.
EOF
	exit 2
}
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
# shellcheck source=scripts/load.sh
. "$here/load.sh"

rounds=5 drivers=sroce,rxe,siw setups=one,two out='' vm_timeout='' kernel=6.1
mtu='' sets=${BENCH_SET:-all} bload=idle
while [ $# -gt 0 ]; do
	[ $# -ge 2 ] || usage
	case $1 in
	--kernel) kernel=$2 ;;
	--rounds) rounds=$2 ;;
	--drivers) drivers=$2 ;;
	--setups) setups=$2 ;;
	--set) sets=$2 ;;
	--out) out=$2 ;;
	--timeout) vm_timeout=$2 ;;
	--mtu) mtu=$2 ;;
	--load) bload=$2 ;;
	*) usage ;;
	esac
	shift 2
done
SWEEP_TOOLS=${BENCH_SWEEP_TOOLS:-ib_write_bw ib_send_bw tcp_bw}
SWEEP_SIZES=${BENCH_SWEEP_SIZES:-2 8 32 128 512 2048 8192 32768 131072 524288 2097152 8388608}
for v in "$rounds" "${vm_timeout:-900}" "${BENCH_SCALE_TIMEOUT:-600}" "${BENCH_SECS:-5}" "${BENCH_ITERS:-1000}" \
	"${BENCH_TIMEOUT:-60}" "${BENCH_SWEEP_SECS:-2}" $SWEEP_SIZES; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || usage
done
for v in $SWEEP_TOOLS; do [[ $v =~ ^(ib_[a-z]+_bw|tcp_bw|udp_bw)$ ]] || usage; done
IFS=, read -ra DRIVERS <<<"$drivers"
IFS=, read -ra SETUPS <<<"$setups"
for d in "${DRIVERS[@]}"; do [[ $d =~ ^(sroce|rxe|siw)$ ]] || usage; done
[[ $kernel =~ ^(6\.1|6\.12|7\.2)$ ]] || usage
[ -z "$mtu" ] || [[ $mtu =~ ^[1-9][0-9]{2,4}$ ]] || usage
load_ok "$bload" || usage
: "${out:=$top/build/bench/$kernel${mtu:+-$mtu}$(load_suffix "$bload")}"
for s in "${SETUPS[@]}"; do [[ $s =~ ^(one|two)$ ]] || usage; done
[ "$sets" != all ] || sets=core,base,sweep,qps
IFS=, read -ra SETS <<<"$sets"
for s in "${SETS[@]}"; do [[ $s =~ ^(core|base|sweep|qps|scale)$ ]] || usage; done
has_set() { [[ ,$sets, == *,$1,* ]]; }
if has_set scale && [[ ,$setups, != *,two,* ]]; then
	echo "bench.sh: --set scale runs between two guests: --setups two" >&2
	usage
fi
# A scale boot holds six runs of up to BENCH_SCALE_TIMEOUT each.
if [ -z "$vm_timeout" ]; then
	vm_timeout=900
	! has_set scale || vm_timeout=3600
fi

# vm_broken LOG: why vm-run's guests (its "vmN: rc=R time=T VERDICT" lines
# in LOG) give no figures: vm-splat, vm-timeout, vm-rc=R (perf.sh exits 0
# or 1), vm-no-log; nothing when they ran to the end cleanly.
vm_broken() {
	awk '/^vm[0-9]+: rc=/ {
		rc = substr($2, 4)
		if ($3 ~ /^time=timeout/) why = "vm-timeout"
		else if ($0 ~ / SPLAT \(/) why = "vm-splat"
		else if ($0 ~ / no console log \(/) why = "vm-no-log"
		else if (rc != "0" && rc != "1") why = "vm-rc=" rc
		if (why != "") { print why; exit }
	}' "$1" 2>/dev/null
}

# peer_hung_only LOG BENCH: VM0 ran to its end cleanly and recorded in
# BENCH a run whose server on VM1 never exited (perf.sh: server-hung,
# the later runs peer-hung), while VM1 only timed out, without a splat:
# VM0's figures before the hang stand, and the hang is a failed run.
peer_hung_only() {
	grep -qs ' fail server-hung$' "$2" && awk '/^vm[0-9]+: rc=/ {
		if ($0 ~ / SPLAT \(/ || $0 ~ / no console log \(/) bad = 1
		if ($1 == "vm0:" && ($3 ~ /^time=timeout/ || ($2 != "rc=0" && $2 != "rc=1"))) bad = 1
		n++
	} END { exit !(n > 1 && !bad) }' "$1"
}

# cpu_now: "BUSY STEAL TOTAL OURS", the host's CPU time in clock ticks
# (/proc/stat: busy, stolen by this machine's own hypervisor, all) and
# what this script's finished children used (the guests' QEMUs: vm-run.sh
# waits for them, this script for vm-run.sh).
cpu_now() {
	awk '$1 == "cpu" { b = $2 + $3 + $4 + $7 + $8; st = $9
		t = $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }
	END { printf "%d %d %d ", b, st, t }' /proc/stat
	awk '{ sub(/^.*\) /, ""); print $14 + $15 }' /proc/$$/stat
}
# cpu_share BEFORE AFTER: "other=P steal=S": the share (%) of all the
# host's CPUs that other processes than the guests used between the two,
# and that this machine's hypervisor took.
cpu_share() {
	echo "$1 $2" | awk '{ t = $7 - $3
		if (t <= 0) { print "other=? steal=?"; exit }
		o = ($5 - $1) - ($8 - $4); if (o < 0) o = 0
		printf "other=%.0f steal=%.0f\n", 100 * o / t, 100 * ($6 - $2) / t }'
}

# The runs of each setup. The core runs come first: when the first run
# of a guest fails, it tries no other.
CORE_CSV=${BENCH_RUNS:-ib_write_bw 65536,ib_read_bw 65536,ib_send_bw 65536,ib_send_lat 2,ib_send_lat 64,ib_write_lat 2,ib_write_lat 64}
sweep_setup=${SETUPS[0]} qps_setup=${SETUPS[0]}
[[ ,$setups, != *,two,* ]] || sweep_setup=two
[[ ,$setups, != *,one,* ]] || qps_setup=one
declare -A RUNS_OF SWEEP_OF SWEEP_TOOLS_OF
for setup in "${SETUPS[@]}"; do
	l=()
	if has_set core; then l+=("$CORE_CSV"); fi
	if has_set base; then l+=("tcp_bw 65536,udp_bw 65507,udp_lat 2,memcpy 65536"); fi
	if has_set qps && [ "$setup" = "$qps_setup" ]; then
		l+=("ib_write_bw-q1 65536,ib_write_bw-q2 65536,ib_write_bw-q4 65536,ib_write_bw-q8 65536")
	fi
	if has_set scale && [ "$setup" = two ]; then
		l+=("cmscale 1024,cmscale 4096,ib_write_bw-q16 4096,ib_write_bw-q256 4096,ib_write_bw-q1024 4096,ib_write_bw-q4096 4096")
	fi
	RUNS_OF[$setup]=$(IFS=,; echo "${l[*]}")
	# The sweep, made by perf.sh from the tools and sizes alike (a list
	# would make the guest's kernel command line too long).
	l=() SWEEP_TOOLS_OF[$setup]=''
	if has_set sweep && [ "$setup" = "$sweep_setup" ]; then
		SWEEP_TOOLS_OF[$setup]=$SWEEP_TOOLS
		for t in $SWEEP_TOOLS; do
			for z in $SWEEP_SIZES; do
				# Not twice: a run the core has already.
				[[ ,${RUNS_OF[$setup]}, == *,"$t $z",* ]] || l+=("$t $z")
			done
		done
	fi
	SWEEP_OF[$setup]=$(IFS=,; echo "${l[*]}")
done

# The guest side reads these; the kernel command line carries no
# environment, so they go in as arguments of env(1).
genv=(env "BENCH_SECS=${BENCH_SECS:-5}" "BENCH_ITERS=${BENCH_ITERS:-1000}"
	"BENCH_TIMEOUT=${BENCH_TIMEOUT:-60}"
	"BENCH_SCALE_TIMEOUT=${BENCH_SCALE_TIMEOUT:-600}"
	"BENCH_SWEEP_SECS=${BENCH_SWEEP_SECS:-2}" "BENCH_SWEEP_SIZES=$SWEEP_SIZES"
	"BENCH_SHOW=${BENCH_SHOW:-0}" "BENCH_MTU=$mtu")
genv+=("BENCH_LOAD_GUEST=$(load_guest "$bload")")

mkdir -p "$out"
out=$(realpath "$out")
results=$out/results.txt load=$out/load.txt
: >"$results"
: >"$load"
# What ran, for the matrix of several runs (bench-table.py --matrix).
{
	echo "kernel=$kernel"
	echo "mtu=${mtu:-1500}"
	echo "load=$bload"
	echo "rounds=$rounds"
	echo "sets=$sets"
	echo "setups=$setups"
	echo "commit=$(git -C "$top" describe --always --dirty 2>/dev/null || echo unknown)"
	echo "date=$(date -u +%F)"
} >"$out/conf.txt"
t0=$(date +%s)

declare -A built=([sroce]=1 [rxe]=1 [siw]=1)
if [[ ,$drivers, == *,sroce,* ]]; then
	echo "bench: building sroce.ko"
	"$here/build.sh" "$kernel" >"$out/build.log" 2>&1 || {
		built[sroce]=0
		echo "bench: the sroce build failed (see $out/build.log); sroce will show fail"
	}
fi
if [[ ,$drivers, == *,siw,* ]]; then
	echo "bench: building siw.ko out of tree (scripts/siw.sh)"
	"$here/siw.sh" "$kernel" >>"$out/build.log" 2>&1 || {
		built[siw]=0
		echo "bench: the siw build failed (see $out/build.log); siw will show fail"
	}
fi
if has_set base; then
	make -s -C "$top/tools" sroce-memcpy >>"$out/build.log" 2>&1 ||
		echo "bench: tools/sroce-memcpy did not build (see $out/build.log)"
fi
if has_set scale; then
	make -s -C "$top/tools" sroce-cmscale >>"$out/build.log" 2>&1 ||
		echo "bench: tools/sroce-cmscale did not build (see $out/build.log)"
fi

# --load host:N: the hogs start after the build and stop when this script
# ends, however it ends.
load_host_start "$bload"
[ ${#load_hogs[@]} = 0 ] ||
	echo "bench: ${#load_hogs[@]} CPU-bound processes on the host for the whole run"

for ((round = 1; round <= rounds; round++)); do
	# ABBA: every other round takes the drivers in reverse order.
	order=("${DRIVERS[@]}")
	if ((round % 2 == 0)); then
		order=()
		for ((i = ${#DRIVERS[@]} - 1; i >= 0; i--)); do order+=("${DRIVERS[$i]}"); done
	fi
	for setup in "${SETUPS[@]}"; do
		IFS=, read -ra RUNS <<<"${RUNS_OF[$setup]},${SWEEP_OF[$setup]}"
		# Nothing of the chosen sets runs in this setup: no boot.
		[ -n "${RUNS_OF[$setup]}${SWEEP_OF[$setup]}" ] || continue
		for drv in "${order[@]}"; do
			dir=$out/r$round-$setup-$drv
			vms=1 mem=1024
			[ "$setup" = one ] || vms=2
			# 4096 connected QPs of 128 WRs each way hold about
			# 700 MiB of a guest's memory with sroce.
			[[ ${RUNS_OF[$setup]} != *cmscale* ]] || mem=2048
			s=$(date +%s)
			echo "$round $setup $drv before $(cat /proc/loadavg)" >>"$load"
			c0=$(cpu_now)
			if [ "${built[$drv]}" = 0 ]; then
				echo "bench: round $round, $setup, $drv: not built"
				status='not built'
				mkdir -p "$dir/vm0"
				: >"$dir/vm0/bench.txt"
			else
				SROCE_VM_GRACE=${SROCE_VM_GRACE:-120} \
					"$here/vm-run.sh" --kernel "$kernel" --vms $vms \
					--cpus $((3 - vms)) --mem $mem --out "$dir" \
					--timeout "$vm_timeout" -- "${genv[@]}" \
					"BENCH_RUNS=${RUNS_OF[$setup]}" \
					"BENCH_SWEEP_TOOLS=${SWEEP_TOOLS_OF[$setup]}" \
					"$top/tests/guest/perf.sh" "$drv" "$setup" >"$dir.log" 2>&1
				status=$(tail -n1 "$dir.log")
			fi
			echo "$round $setup $drv after $(cat /proc/loadavg)" >>"$load"
			echo "$round $setup $drv cpu $(cpu_share "$c0" "$(cpu_now)")" >>"$load"
			echo "bench: round $round, $setup, $drv: $status ($(($(date +%s) - s)) s)"
			# A guest that splatted, timed out or died gives no
			# figures at all (perf.sh's own exit 1 is a run that
			# failed, recorded as such), unless VM0 saw VM1's
			# server hang and recorded that run as failed.
			broken=$(vm_broken "$dir.log")
			[ "$status" != 'not built' ] || broken=not-built
			[ "$broken" != vm-timeout ] ||
				! peer_hung_only "$dir.log" "$dir/vm0/bench.txt" || broken=''
			for r in "${RUNS[@]}"; do
				[ -n "$r" ] || continue
				line=$(grep -s "^$r $setup $drv " "$dir/vm0/bench.txt")
				if [ -n "$broken" ]; then
					echo "$round $r $setup $drv fail $broken" >>"$results"
				elif [ -n "$line" ]; then
					while IFS= read -r l; do
						echo "$round $l"
					done <<<"$line" >>"$results"
				else
					echo "$round $r $setup $drv fail missing" >>"$results"
				fi
			done
		done
	done
done

# --- the table ---------------------------------------------------------------
{
	case $bload in
	idle) echo "load: idle (nothing else started; the host's load below)" ;;
	host:*) echo "load: $bload (${bload#host:} CPU-bound processes on the host, from the first boot to the last)" ;;
	guest:*) echo "load: $bload (${bload#guest:} CPU-bound processes in each guest, through its runs)" ;;
	esac
	python3 "$here/bench-table.py" "$results" "$CORE_CSV"
	# The host's load around the guests (2 cores; another user's work
	# shows here): the 1-minute average, median (min..max).
	for w in before after; do
		awk -v w=$w '$4 == w { print $5 }' "$load" | sort -g |
			awk -v w=$w '{ v[++n] = $1 }
			END { if (n) printf "%s %.2f (%.2f..%.2f)", w,
				n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2,
				v[1], v[n] }'
		echo
	done | paste -sd' ' | sed "s|^|host load (1-min average, $(nproc) cores) around $(grep -c ' before ' "$load") guest runs: |; s|\$|; OUT/load.txt|"
	# What else ran on the host while the guests did (--load host:N's
	# processes included), as a share of all its CPUs.
	for k in other steal; do
		sed -n "s/.* cpu .*$k=\([0-9]*\).*/\1/p" "$load" | sort -g |
			awk -v k=$k '{ v[++n] = $1 }
			END { if (n) printf "%s %s%% (%s..%s)", k,
				n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2,
				v[1], v[n] }'
		echo
	done | paste -sd' ' | sed "s|^|host CPU while the guests ran, median (min..max) of $(nproc) cores' time: |; s|other|other processes|; s|steal|stolen by its hypervisor|"
} | tee "$out/table.txt"
load_host_stop
python3 "$here/bench-plot.py" "$results" "$out/table.svg" \
	"sroce / rdma_rxe on $kernel${mtu:+, MTU $mtu}" &&
	echo "bench: chart in $out/table.svg"
echo "bench: $(($(date +%s) - t0)) s, results in $out"
