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
# With FAULT_PCT (the debug kernel, which has fault injection), failslab
# and fail_page_alloc fail FAULT_PCT% of the allocations each round's
# process makes with sroce's code on the stack between its setup and
# its teardown (lib.sh faults_on, sroce-scribble --faults). Checked
# besides: some allocations were failed.
#   usage: scribble.sh [ROUNDS [SEED [FAULT_PCT]]]
#   scripts/vm-run.sh --kernel 6.1 --out DIR -- tests/guest/run.sh scribble.sh 200
# The scribbler took 39 to 88 s for 200 rounds on 6.1 (host idle, busy);
# on the debug kernel (KASAN, lockdep, kmemleak) 24 to 60 rounds took 41
# to 107 s with the host idle, 30 to 40 took 157 to 189 s with it busy:
# give a debug guest 30 rounds.
set -u
# shellcheck source=tests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

ROUNDS=${1:-200}
SEED=${2:-1}
FAULT_PCT=${3:-}
# Seconds the scribbler may take: generous, a debug guest is slow. And
# one round: one still running then hung.
SCRIBBLE_TIMEOUT=${SCRIBBLE_TIMEOUT:-600}
SCRIBBLE_ALARM=${SCRIBBLE_ALARM:-60}
scribbler=$SROCE_TREE/tools/sroce-scribble
logs=$SROCE_OUT/scribble

# The victim (lib.sh), for as long as the scribbler runs.
victim_begin "$logs" "$SEED" "$FAULT_PCT"
echo "scribble: $ROUNDS rounds, seed $SEED${FAULT_PCT:+, faults $FAULT_PCT%}" >/dev/kmsg
hostile_run scribbler "$SCRIBBLE_TIMEOUT" "$FAULT_PCT" "$logs/scribble.out" \
	"$logs/scribble.err" "$scribbler" sroce0 --gid-index "$VICTIM_GI" \
	--rounds "$ROUNDS" --seed "$SEED" --alarm "$SCRIBBLE_ALARM" \
	"${FAULT_ARGS[@]}"
# None hung past its alarm (the exit status says so too), and some ended
# by destroying their objects themselves, not all by a crash.
hostile_verdict scribbler "^scribble: rounds=$ROUNDS .* child_alarms=0 clean=[1-9]" "$logs/scribble.out" \
	"scribbler: $ROUNDS rounds, every one set up and destroyed, none hung, in $HOSTILE_SECS s" \
	"scribbler: $ROUNDS rounds, every one set up and destroyed, none hung (exit $HOSTILE_RC after $HOSTILE_SECS s)" \
	tail -n 20 "$logs/scribble.err"
victim_end
