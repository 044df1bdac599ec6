#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Concurrent verbs, in one guest: tools/sroce-stress runs THREADS threads
# for SECONDS seconds on sroce0, creating, using and destroying PDs, MRs,
# CQs, channels, SRQs, QPs, AHs and MWs shared between the threads with
# random valid and invalid parameters (destroys race with uses); every
# result must be a success or a refusal with an allowed errno, and every
# invalid call must be refused. Meanwhile a victim, tools/sroce-integrity's
# server and client in loopback on the same device, runs back to back.
# Checked: the stressor exits 0 (nothing unexpected, everything destroyed)
# within a bound; `rdma resource show` lists no pd, cq, qp or mr of it
# afterwards; every victim run is clean (exit 0, mismatches=0 errors=0);
# rdma link delete and rmmod work; kmemleak finds nothing. The guest's log
# is checked for splats by the host.
#   usage: stress.sh [SECONDS [THREADS [SEED]]]
#   scripts/vm-run.sh --kernel 6.1 --out DIR -- tests/guest/run.sh stress.sh 60
set -u
# shellcheck source=tests/guest/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/guest/rdma-lib.sh
. "$(dirname "$0")/rdma-lib.sh"

SECS=${1:-60}
THREADS=${2:-4}
SEED=${3:-1}
# Seconds beyond SECS the stressor may take to stop and tear down.
STRESS_GRACE=${STRESS_GRACE:-300}
# Each victim run's bytes: KASAN moves about 0.5 MB/s, where 64 MiB took
# 146 s and the last run held up the end.
VBYTES=64M
[ "$SROCE_KERNEL" != debug ] || VBYTES=4M
tool=$SROCE_TREE/tools/sroce-integrity
stressor=$SROCE_TREE/tools/sroce-stress
logs=$SROCE_OUT/stress
mkdir -p "$logs"

kmemleak_clear
t "install sroce.ko for modprobe, rdma link add sroce0, port active" \
	setup_rdma sroce
t "modprobe rdma_ucm" modprobe rdma_ucm
if gi=$(gid_index sroce0 v4); then
	ok "RoCE v2 GID of $MY_V4 on sroce0"
else
	not_ok "RoCE v2 GID of $MY_V4 on sroce0"
fi

# The victim: integrity pairs through rdma_cm on the same device, one
# 64M run after another for as long as the stressor runs (at least one).
victim_loop() {
	local n=0 srv port
	while :; do
		port=$((18900 + n % 50))
		"$tool" -s -b "$MY_V4" -p "$port" --listen-timeout 60 \
			--timeout 60 >"$logs/isrv.$n" 2>&1 &
		srv=$!
		wait_for 30 grep -q 'server listening' "$logs/isrv.$n"
		"$tool" -c "$MY_V4" -p "$port" --bytes "$VBYTES" --max-size 256K \
			--depth 8 --seed "$((SEED + n))" --timeout 60 \
			>"$logs/icli.$n" 2>&1
		echo $? >"$logs/icli.$n.rc"
		wait "$srv"
		echo $? >"$logs/isrv.$n.rc"
		n=$((n + 1))
		[ -e "$logs/stop" ] && break
	done
}
rm -f "$logs/stop"
victim_loop &
vpid=$!

echo "stress: $SECS s, $THREADS threads, seed $SEED" >/dev/kmsg
T0=$SECONDS
timeout -k 10 "$((SECS + STRESS_GRACE))" "$stressor" -d sroce0 \
	--gid-index "$gi" --threads "$THREADS" --seconds "$SECS" \
	--seed "$SEED" >"$logs/stress.out" 2>"$logs/stress.err"
rc=$?
took=$((SECONDS - T0))
sed 's/^/# /' "$logs/stress.out"
echo "# stressor: exit $rc after $took s"
if [ $rc -eq 0 ] && grep -q '^sroce-stress: .* unexpected=0 ' "$logs/stress.out"; then
	ok "stressor: nothing unexpected, every object destroyed, in $took s"
else
	not_ok "stressor: nothing unexpected, every object destroyed (exit $rc after $took s)"
	[ $rc -ge 124 ] && echo "# stressor: timed out or killed"
	head -n 40 "$logs/stress.err" | sed 's/^/#   /'
fi

# Nothing of the stressor's is left: it has exited, so any pd, cq, qp or
# mr still listed under its name is a leak.
left=$(rdma resource show pd 2>/dev/null; rdma resource show cq 2>/dev/null
	rdma resource show qp 2>/dev/null; rdma resource show mr 2>/dev/null)
left=$(echo "$left" | grep 'comm sroce-stress')
if [ -z "$left" ]; then
	ok "rdma resource show: no pd, cq, qp or mr of sroce-stress left"
else
	not_ok "rdma resource show: no pd, cq, qp or mr of sroce-stress left"
	echo "$left" | head -n 20 | sed 's/^/#   /'
fi

# The victim's runs are bounded by their --timeout.
touch "$logs/stop"
for ((i = 0; i < 1300; i++)); do
	kill -0 "$vpid" 2>/dev/null || break
	sleep 0.1
done
if kill -0 "$vpid" 2>/dev/null; then
	not_ok "victim runs end"
	pkill -9 -P "$vpid"
	kill -9 "$vpid"
fi
wait "$vpid" 2>/dev/null
runs=0 bad=
for f in "$logs"/icli.*.rc "$logs"/isrv.*.rc; do
	[ -e "$f" ] || continue
	runs=$((runs + 1))
	l=${f%.rc}
	if [ "$(cat "$f")" != 0 ] || ! grep -q 'mismatches=0 errors=0' "$l"; then
		bad+=" ${l##*/}"
	fi
done
for ((i = 0; i < runs / 2; i++)); do
	grep -h '^integrity: ops=' "$logs/icli.$i" | sed "s/^/# victim $i: /"
done
if [ $runs -ge 2 ] && [ -z "$bad" ]; then
	ok "victim: $((runs / 2)) integrity runs clean (exit 0, mismatches=0 errors=0)"
else
	not_ok "victim: integrity runs clean ($((runs / 2)) runs; bad:$bad)"
	for f in $bad; do
		echo "# $f:"
		tail -n 10 "$logs/$f" | sed 's/^/#   /'
	done
fi

t "rdma link delete sroce0" timeout 60 rdma link delete sroce0
t "rmmod sroce" timeout 60 rmmod sroce
kmemleak_check
finish
