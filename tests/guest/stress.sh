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
# With FAULT_PCT (the debug kernel, which has fault injection), failslab
# and fail_page_alloc fail FAULT_PCT% of the allocations the stressor's
# worker threads make with sroce's code on the stack (lib.sh faults_on);
# ENOMEM is then a refusal any call may give. Checked besides: some
# allocations were failed.
#   usage: stress.sh [SECONDS [THREADS [SEED [FAULT_PCT]]]]
#   scripts/vm-run.sh --kernel 6.1 --out DIR -- tests/guest/run.sh stress.sh 60
set -u
# shellcheck source=tests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

SECS=${1:-60}
THREADS=${2:-4}
SEED=${3:-1}
FAULT_PCT=${4:-}
# Seconds beyond SECS the stressor may take to stop and tear down.
STRESS_GRACE=${STRESS_GRACE:-300}
stressor=$SROCE_TREE/tools/sroce-stress
logs=$SROCE_OUT/stress

# The victim (lib.sh), for as long as the stressor runs.
victim_begin "$logs" "$SEED" "$FAULT_PCT"
echo "stress: $SECS s, $THREADS threads, seed $SEED${FAULT_PCT:+, faults $FAULT_PCT%}" >/dev/kmsg
hostile_run stressor "$((SECS + STRESS_GRACE))" "$FAULT_PCT" \
	"$logs/stress.out" "$logs/stress.err" "$stressor" -d sroce0 \
	--gid-index "$VICTIM_GI" --threads "$THREADS" --seconds "$SECS" \
	--seed "$SEED" "${FAULT_ARGS[@]}"
hostile_verdict stressor '^sroce-stress: .* unexpected=0 ' "$logs/stress.out" \
	"stressor: nothing unexpected, every object destroyed, in $HOSTILE_SECS s" \
	"stressor: nothing unexpected, every object destroyed (exit $HOSTILE_RC after $HOSTILE_SECS s)" \
	head -n 40 "$logs/stress.err"

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

victim_end
