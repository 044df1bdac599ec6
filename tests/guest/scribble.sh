#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A hostile process, in one guest: tools/sroce-scribble scribbles over its
# own mmap'ed SQ, RQ, SRQ and CQ rings (indexes, WQE fields, whole pages,
# the header's geometry) and rings the doorbells, ROUNDS rounds of fresh
# objects, each in a child process, on sroce0; meanwhile a victim,
# tools/sroce-integrity's server and client in loopback on the same
# device, moves a bounded amount of data. Checked: the scribbler ends
# within a bound and could set up and destroy every round's objects; the
# victim's run is clean (exit 0, mismatches=0 errors=0): other processes'
# QPs keep their traffic; rdma link delete and rmmod work afterwards;
# kmemleak finds nothing. The guest's log is checked for splats by the
# host.
#   usage: scribble.sh [ROUNDS [SEED]]
#   scripts/vm-run.sh --kernel 6.1 --out DIR -- tests/guest/run.sh scribble.sh 200
# The scribbler took 39 to 88 s for 200 rounds on 6.1 (host idle, busy);
# on the debug kernel (KASAN, lockdep, kmemleak) 24 to 60 rounds took 41
# to 107 s with the host idle, 30 to 40 took 157 to 189 s with it busy:
# give a debug guest 30 rounds.
set -u
# shellcheck source=tests/guest/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/guest/rdma-lib.sh
. "$(dirname "$0")/rdma-lib.sh"

ROUNDS=${1:-200}
SEED=${2:-1}
# Seconds the scribbler may take: generous, a debug guest is slow.
SCRIBBLE_TIMEOUT=${SCRIBBLE_TIMEOUT:-600}
tool=$SROCE_TREE/tools/sroce-integrity
scribbler=$SROCE_TREE/tools/sroce-scribble
logs=$SROCE_OUT/scribble
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
# 64M run after another for as long as the scribbler runs (at least one);
# each side's exit status goes to a file of its own.
victim_loop() {
	local n=0 srv port
	while :; do
		port=$((18900 + n % 50))
		"$tool" -s -b "$MY_V4" -p "$port" --listen-timeout 60 \
			--timeout 60 >"$logs/isrv.$n" 2>&1 &
		srv=$!
		# (the scribbler keeps the CPUs busy: wait for the listener)
		wait_for 30 grep -q 'server listening' "$logs/isrv.$n"
		"$tool" -c "$MY_V4" -p "$port" --bytes 64M --max-size 256K \
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

echo "scribble: $ROUNDS rounds, seed $SEED" >/dev/kmsg
T0=$SECONDS
timeout -k 10 "$SCRIBBLE_TIMEOUT" "$scribbler" sroce0 --gid-index "$gi" \
	--rounds "$ROUNDS" --seed "$SEED" >"$logs/scribble.out" \
	2>"$logs/scribble.err"
rc=$?
secs=$((SECONDS - T0))
sed 's/^/# /' "$logs/scribble.out"
echo "# scribbler: exit $rc after $secs s"
if [ $rc -eq 0 ] && grep -q "^scribble: rounds=$ROUNDS " "$logs/scribble.out"; then
	ok "scribbler: $ROUNDS rounds, every one set up and destroyed, in $secs s"
else
	not_ok "scribbler: $ROUNDS rounds, every one set up and destroyed (exit $rc after $secs s)"
	[ $rc -ge 124 ] && echo "# scribbler: timed out or killed"
	tail -n 20 "$logs/scribble.err" | sed 's/^/#   /'
fi

# The victim's runs are bounded by their --timeout; its last one ends
# within 130 s of the stop.
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
