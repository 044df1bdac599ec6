#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Where a guest's time goes during one perftest run: scripts/guest-prof.py
# samples each vCPU's instruction pointer through QEMU's monitor while
# tests/guest/prof.sh runs the test, then reports the share of samples by
# kernel symbol, user space and idle (halted), guest by guest.
# perf inside a TCG guest cannot do this: see Documentation/testing.rst, Profiles.
set -euo pipefail
usage() {
	cat >&2 <<'EOF2'
usage: profile.sh [--kernel 6.1|6.12|7.2] [--driver sroce|rxe|siw]
                  [--setup one|two] [--mtu N] [--secs S] [--hz N]
                  [--load idle|host:N|guest:N] [--out DIR] TOOL SIZE
  TOOL SIZE   one perftest run as tests/guest/perf.sh takes it, e.g.
              ib_write_bw 65536, ib_send_lat 2, ib_write_bw-q4 65536
  --kernel    the guests' kernel (default 6.1); --driver (default sroce)
  --setup     one guest (2 vCPUs, loopback) or two (1 vCPU each); default one
  --secs      the run's length (default 20; a latency run has 100000
              iterations a second of it in one guest, 2500 between two,
              whose link takes about 300 us a round trip under TCG);
              sampling covers it after 3 s
              of warm-up, at --hz (default 200) rounds a second
  --load      as bench.sh's: N CPU-bound processes on the host for the
              whole run, or in each guest through its run (default idle)
  --out       default build/profile/KERNEL-SETUP-DRIVER-TOOL-SIZE[-LOAD]
EOF2
	exit 2
}
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
# shellcheck source=scripts/load.sh
. "$here/load.sh"
kernel=6.1 driver=sroce setup=one mtu='' secs=20 hz=200 out='' load=idle
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) kernel=$2; shift 2 ;;
	--driver) driver=$2; shift 2 ;;
	--setup) setup=$2; shift 2 ;;
	--mtu) mtu=$2; shift 2 ;;
	--secs) secs=$2; shift 2 ;;
	--hz) hz=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--load) load=$2; shift 2 ;;
	-*) usage ;;
	*) break ;;
	esac
done
[ $# -eq 2 ] || usage
tool=$1 size=$2
[[ $setup =~ ^(one|two)$ && $driver =~ ^(sroce|rxe|siw)$ ]] || usage
load_ok "$load" || usage
vms=1
[ "$setup" = one ] || vms=2
out=${out:-$top/build/profile/$kernel-$setup-$driver-$tool-$size${mtu:+-mtu$mtu}$(load_suffix "$load")}
rm -rf "$out"
mkdir -p "$out"
out=$(realpath "$out")
[ "$driver" != sroce ] || "$here/build.sh" "$kernel" >"$out/build.log" 2>&1
[ "$driver" != siw ] || "$here/siw.sh" "$kernel" >"$out/build.log" 2>&1
make -s -C "$top/tools" >/dev/null

# --load host:N: the hogs run from before the boot to the end.
load_host_start "$load"
gload=$(load_guest "$load")

socks=()
for ((i = 0; i < vms; i++)); do socks+=("$out/vm$i/mon.sock"); done
python3 "$here/guest-prof.py" sample "${socks[@]}" --hz "$hz" \
	--secs "$secs" --start "$out/vm0/prof.start" \
	--stop "$out/vm0/prof.stop" --out "$out/samples.txt" \
	>"$out/sampler.log" 2>&1 &
sampler=$!
rc=0
SROCE_QEMU_MONITOR=1 "$here/vm-run.sh" --kernel "$kernel" --vms $vms \
	--cpus $((3 - vms)) --out "$out" --timeout $((secs + 600)) -- \
	env "BENCH_SECS=$((secs + 5))" "BENCH_TIMEOUT=$((secs * 4 + 60))" \
	"BENCH_ITERS=$((secs * (vms == 1 ? 100000 : 2500)))" \
	"BENCH_MTU=$mtu" "BENCH_LOAD_GUEST=$gload" \
	"$top/tests/guest/prof.sh" "$driver" "$setup" \
	"$tool" "$size" >"$out/vm.log" 2>&1 || rc=$?
wait $sampler || rc=1
cat "$out/sampler.log"
grep -h "^$tool $size " "$out/vm0/bench.txt" 2>/dev/null || true
for ((i = 0; i < vms; i++)); do
	echo "== guest $i ($kernel, $driver, $setup, $tool $size${mtu:+, MTU $mtu}, load $load)"
	python3 "$here/guest-prof.py" report "$out/samples.txt" \
		"$out/vm$i/kallsyms" --guest $i | tee "$out/report.$i.txt" || rc=1
done
[ $rc = 0 ] || echo "profile: the run failed (rc $rc), see $out/vm.log" >&2
exit $rc
