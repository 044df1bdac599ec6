#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The README's first command: install what is missing, build sroce, boot two
# QEMU guests on a private link with sroce0 on each and move RDMA traffic
# between them through stock rdma-core: the device as ibv_devices and
# ibv_devinfo see it, perftest bandwidth (WRITE, READ, SEND at 4 KiB and
# 64 KiB) and latency (SEND, WRITE), rping with every buffer verified, and
# the device's counters. Then the same perftest runs with the kernel's own
# rdma_rxe in the same setup, and a table sroce vs rdma_rxe (also as
# build/demo/table.svg).
#   demo.sh [--kernel 6.1|6.12|7.2] [--mtu N] [--load idle|host:N|guest:N]
# The kernel is one of the check's matrix (default 6.1, the host's own
# Debian 12 kernel; 6.12 and 7.2 come with their distribution's userland);
# --mtu sets the guests' netdev MTU (default 1500); --load runs the demo on
# a busy host or in busy guests (scripts/bench.sh --load). The demo says
# when other work on the host took a share of its CPUs meanwhile.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
# shellcheck source=scripts/load.sh
. "$here/load.sh"
out=$top/build/demo
kernel=6.1 mtu='' load=idle
usage() {
	echo "usage: demo.sh [--kernel 6.1|6.12|7.2] [--mtu N] [--load idle|host:N|guest:N]" >&2
	exit 2
}
while [ $# -gt 0 ]; do
	[ $# -ge 2 ] || usage
	case $1 in
	--kernel) kernel=$2 ;;
	--mtu) mtu=$2 ;;
	--load) load=$2 ;;
	*) usage ;;
	esac
	shift 2
done
[[ $kernel =~ ^(6\.1|6\.12|7\.2)$ ]] || usage
[ -z "$mtu" ] || [[ $mtu =~ ^[1-9][0-9]{2,4}$ ]] || usage
load_ok "$load" || usage

t0=$(date +%s)
stage() { echo "demo [$1/5] $2 ($(($(date +%s) - t0)) s)"; }

stage 1 "Debian packages (scripts/deps.sh; a few minutes on a fresh machine)"
"$here/deps.sh"
case $kernel in
6.12) suite=trixie ;;
7.2) suite=sid ;;
*) suite='' ;;
esac
if [ -n "$suite" ]; then
	stage 2 "kernel $kernel and the $suite userland (fetched once into /var/cache/sroce)"
	"$here/kernel.sh" "$kernel" >/dev/null
	"$here/rootfs.sh" "$suite" >/dev/null
else
	stage 2 "kernel 6.1: Debian 12's, installed by deps.sh"
fi
stage 3 "building sroce.ko for $kernel"
"$here/build.sh" "$kernel" >/dev/null
stage 4 "two guests with sroce, then two with rdma_rxe (QEMU TCG, about 2-3 minutes each)"
rm -rf "$out"
rc=0
BENCH_RUNS="ib_write_bw 4096,ib_write_bw 65536,ib_read_bw 65536,ib_send_bw 4096,ib_send_bw 65536,ib_send_lat 2,ib_write_lat 2" \
	BENCH_SHOW=1 BENCH_SECS=${BENCH_SECS:-3} BENCH_ITERS=${BENCH_ITERS:-300} \
	"$here/bench.sh" --kernel "$kernel" --rounds 1 --setups two --set core \
	--drivers sroce,rxe \
	--out "$out" ${mtu:+--mtu "$mtu"} --load "$load" 2>&1 | tee "$out.log" |
	sed -n 's/^bench: round 1, two,/demo:/p' || rc=$?
# A guest that failed (rping included) or left a kernel splat fails the demo.
[ "$(grep -c '^bench: round.*: vm-run: PASS' "$out.log")" = 2 ] || rc=1

stage 5 "results"
for drv in sroce rxe; do
	echo "==================== $drv, guest 0 (server on guest 1) ===================="
	tr -d '\r' <"$out/r1-two-$drv/vm0/show.log" 2>/dev/null ||
		echo "(nothing shown: see $out/r1-two-$drv.log)"
done
echo "==================== perftest between the guests ===================="
cat "$out/table.txt" 2>/dev/null || { echo "(no table: see $out.log)"; rc=1; }
[ ! -f "$out/table.svg" ] || echo "chart: $out/table.svg"
# Other work on the host while the guests ran (bench.sh's OUT/load.txt):
# the figures are then a busy machine's, whatever --load said.
busy=$(sed -n 's/.* cpu other=\([0-9]*\).*/\1/p' "$out/load.txt" 2>/dev/null |
	sort -g | tail -n1)
if [ "${busy:-0}" -ge 20 ]; then
	echo "demo: the host was busy: other processes took up to $busy% of its $(nproc) CPUs while the guests ran$([ "$load" = idle ] || echo " (--load $load)"); compare with an idle run (scripts/bench.sh --load)"
else
	echo "demo: the host was otherwise idle while the guests ran (other processes: at most ${busy:-?}% of its $(nproc) CPUs)"
fi
# Every run must have given a number, and rping must have verified.
if grep -q ' fail ' "$out/results.txt" 2>/dev/null; then
	echo "demo: some runs failed (marked fail above); logs in $out"
	rc=1
fi
echo "demo: $(($(date +%s) - t0)) s"
exit $rc
