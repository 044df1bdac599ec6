#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# sroce against rdma_rxe of the same kernel with perftest, in QEMU guests
# (--kernel 6.1, 6.12 or 7.2: Debian 12's, Debian 13's or sid's, each
# with its own userland):
# ib_write_bw, ib_read_bw, ib_send_bw at 64 KiB, ib_send_lat and
# ib_write_lat at 2 and 64 bytes; in one guest (client and server on the
# same device) and between two guests; the drivers alternate run by run
# (sroce, rxe, sroce, rxe, ...) for --rounds rounds. Each guest boot runs one
# driver in one setup (tests/guest/perf.sh). The numbers go to
# OUT/results.txt, the table to OUT/table.txt and stdout. A driver that
# cannot be loaded, or a run that fails, shows "fail", never a number.
#
# Under TCG these numbers compare the two drivers on this host at one time;
# they say nothing about hardware speed.
set -uo pipefail
usage() {
	cat >&2 <<'EOF'
usage: bench.sh [--kernel 6.1|6.12|7.2] [--rounds N] [--drivers sroce,rxe]
                [--setups one,two] [--out DIR] [--timeout SEC] [--mtu N]
  --kernel   the guests' kernel (default 6.1); both drivers run on it
  --rounds   rounds of every driver in every setup (default 2)
  --drivers  which drivers, in the order they alternate (default sroce,rxe)
  --setups   one: one VM, loopback; two: two VMs (default one,two)
  --out      results directory (default build/bench/KERNEL)
  --timeout  limit of one VM run, boot included (default 900)
  --mtu      the guests' netdev MTU (default: the link's, 1500)
  The guest reads BENCH_SECS (bandwidth run length, default 5), BENCH_ITERS
  (latency iterations, default 1000) and BENCH_TIMEOUT (limit of one
  perftest run, default 60) from the environment of this script, and
  BENCH_RUNS ("TOOL SIZE,TOOL SIZE,...": other runs than the ones above)
  and BENCH_SHOW=1 (scripts/demo.sh: show the device, rping, counters).
  The table also goes to OUT/table.svg as a chart (scripts/bench-plot.py).
EOF
	exit 2
}
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")

rounds=2 drivers=sroce,rxe setups=one,two out='' vm_timeout=900 kernel=6.1
mtu=''
while [ $# -gt 0 ]; do
	[ $# -ge 2 ] || usage
	case $1 in
	--kernel) kernel=$2 ;;
	--rounds) rounds=$2 ;;
	--drivers) drivers=$2 ;;
	--setups) setups=$2 ;;
	--out) out=$2 ;;
	--timeout) vm_timeout=$2 ;;
	--mtu) mtu=$2 ;;
	*) usage ;;
	esac
	shift 2
done
for v in "$rounds" "$vm_timeout" "${BENCH_SECS:-5}" "${BENCH_ITERS:-1000}" "${BENCH_TIMEOUT:-60}"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || usage
done
IFS=, read -ra DRIVERS <<<"$drivers"
IFS=, read -ra SETUPS <<<"$setups"
for d in "${DRIVERS[@]}"; do [[ $d =~ ^(sroce|rxe)$ ]] || usage; done
[[ $kernel =~ ^(6\.1|6\.12|7\.2)$ ]] || usage
[ -z "$mtu" ] || [[ $mtu =~ ^[1-9][0-9]{2,4}$ ]] || usage
: "${out:=$top/build/bench/$kernel}"
for s in "${SETUPS[@]}"; do [[ $s =~ ^(one|two)$ ]] || usage; done

# The guest side reads these; the kernel command line carries no
# environment, so they go in as arguments of env(1).
RUNS_CSV=${BENCH_RUNS:-ib_write_bw 65536,ib_read_bw 65536,ib_send_bw 65536,ib_send_lat 2,ib_send_lat 64,ib_write_lat 2,ib_write_lat 64}
genv=(env "BENCH_SECS=${BENCH_SECS:-5}" "BENCH_ITERS=${BENCH_ITERS:-1000}"
	"BENCH_TIMEOUT=${BENCH_TIMEOUT:-60}" "BENCH_RUNS=$RUNS_CSV"
	"BENCH_SHOW=${BENCH_SHOW:-0}" "BENCH_MTU=$mtu")

mkdir -p "$out"
out=$(realpath "$out")
results=$out/results.txt
: >"$results"
t0=$(date +%s)

# The runs of tests/guest/perf.sh, to mark them all failed when a guest
# left nothing.
IFS=, read -ra RUNS <<<"$RUNS_CSV"

built=1
if [[ ,$drivers, == *,sroce,* ]]; then
	echo "bench: building sroce.ko"
	"$here/build.sh" "$kernel" >"$out/build.log" 2>&1 || {
		built=0
		echo "bench: the sroce build failed (see $out/build.log); sroce will show fail"
	}
fi

for ((round = 1; round <= rounds; round++)); do
	for setup in "${SETUPS[@]}"; do
		for drv in "${DRIVERS[@]}"; do
			dir=$out/r$round-$setup-$drv
			vms=1
			[ "$setup" = one ] || vms=2
			s=$(date +%s)
			if [ "$drv" = sroce ] && [ $built = 0 ]; then
				echo "bench: round $round, $setup, $drv: not built"
				status='not built'
				mkdir -p "$dir/vm0"
				: >"$dir/vm0/bench.txt"
			else
				"$here/vm-run.sh" --kernel "$kernel" --vms $vms \
					--cpus $((3 - vms)) --out "$dir" \
					--timeout "$vm_timeout" -- "${genv[@]}" \
					"$top/tests/guest/perf.sh" "$drv" "$setup" >"$dir.log" 2>&1
				status=$(tail -n1 "$dir.log")
			fi
			echo "bench: round $round, $setup, $drv: $status ($(($(date +%s) - s)) s)"
			for r in "${RUNS[@]}"; do
				line=$(grep -s "^$r $setup $drv " "$dir/vm0/bench.txt")
				if [ -n "$line" ]; then
					while IFS= read -r l; do
						echo "$round $l"
					done <<<"$line" >>"$results"
				else
					echo "$round $r $setup $drv fail -" >>"$results"
				fi
			done
		done
	done
done

# --- the table ---------------------------------------------------------------
# results.txt: ROUND TEST SIZE SETUP DRIVER METRIC|fail VALUE. A cell is the
# mean over rounds of the bandwidth (bw_avg) or typical latency (lat_typ),
# "fail" unless every round gave a number, "-" for a driver not run.
awk -v rounds="$rounds" -v setups="$setups" '
function cell(k) {
	if (!(k in lines)) return "-"
	if (fails[k] > 0 || n[k] != rounds) return "fail"
	if (n[k] == 1) return sprintf("%.2f", sum[k])
	return sprintf("%.2f (%.4g..%.4g)", sum[k] / n[k], lo[k], hi[k])
}
# The mean alone, for the ratio.
function mean(k) { return sum[k] / n[k] }
{
	k = $2 SUBSEP $3 SUBSEP $4 SUBSEP $5
	if (!(($2 SUBSEP $3) in seen)) { seen[$2 SUBSEP $3] = 1; order[++nt] = $2 SUBSEP $3 }
	lines[k]++
	if ($6 == "fail") fails[k]++
	else if ($6 == "bw_avg" || $6 == "lat_typ") {
		if (!(k in n) || $7 < lo[k]) lo[k] = $7
		if (!(k in n) || $7 > hi[k]) hi[k] = $7
		sum[k] += $7; n[k]++
	}
}
END {
	ns = split(setups, S, ",")
	fmt = "%-12s %5s %-5s %24s %24s %6s  %s\n"
	printf fmt, "test", "size", "setup", "sroce", "rxe", "ratio", ""
	for (i = 1; i <= nt; i++) {
		split(order[i], tz, SUBSEP)
		lat = tz[1] ~ /_lat$/
		for (j = 1; j <= ns; j++) {
			a = cell(order[i] SUBSEP S[j] SUBSEP "sroce")
			b = cell(order[i] SUBSEP S[j] SUBSEP "rxe")
			r = "-"
			ka = order[i] SUBSEP S[j] SUBSEP "sroce"
			kb = order[i] SUBSEP S[j] SUBSEP "rxe"
			if (a !~ /^(fail|-)$/ && b !~ /^(fail|-)$/ && mean(ka) > 0 && mean(kb) > 0)
				r = sprintf("%.2f", lat ? mean(kb) / mean(ka) : mean(ka) / mean(kb))
			printf fmt, tz[1], tz[2], S[j], a, b, r,
				lat ? "usec t_typical; ratio rxe/sroce" : "MB/s average; ratio sroce/rxe"
		}
	}
	print "ratio > 1: sroce is better (more bandwidth, less latency)"
	printf "mean (min..max) of %d round(s); every number in results.txt\n", rounds
}' "$results" | tee "$out/table.txt"
python3 "$here/bench-plot.py" "$results" "$out/table.svg" \
	"sroce / rdma_rxe on $kernel${mtu:+, MTU $mtu}" &&
	echo "bench: chart in $out/table.svg"
echo "bench: $(($(date +%s) - t0)) s, results in $out"
