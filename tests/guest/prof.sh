#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest side of scripts/profile.sh: prof.sh DRIVER one|two TOOL SIZE
# One perftest run (tests/guest/perf.sh with BENCH_RUNS set to it) while
# the host samples this guest's vCPUs through QEMU's monitor. Once the
# client has run for PROF_SETTLE seconds (default 3), each guest writes
# its /proc/kallsyms (module addresses included) to $SROCE_OUT/kallsyms,
# and guest 0 creates $SROCE_OUT/prof.start; prof.stop follows the run.
set -u
here=$(dirname "$0")
# shellcheck source=tests/guest/lib.sh
. "$here/lib.sh"

DRIVER=${1:?usage: prof.sh DRIVER one|two TOOL SIZE}
SETUP=${2:?} TOOL=${3:?} SIZE=${4:?}
export BENCH_RUNS="$TOOL $SIZE"
rm -f "$SROCE_OUT/prof.start" "$SROCE_OUT/prof.stop" "$SROCE_OUT/kallsyms"
"$here/perf.sh" "$DRIVER" "$SETUP" &
pid=$!
# The client is the one given an address (guest 0, or the only one);
# guest 1 serves.
if [ "$SETUP" = one ] || [ "$SROCE_VM_INDEX" = 0 ]; then
	addr=${MY_V4}
	[ "$SETUP" = one ] || addr=$PEER_V4
	pat="^${TOOL%-q*} .* $addr\$"
else
	pat="^${TOOL%-q*} "
fi
if wait_for 120 pgrep -f -- "$pat" >/dev/null; then
	sleep "${PROF_SETTLE:-3}"
	cat /proc/kallsyms >"$SROCE_OUT/kallsyms"
	[ "$SROCE_VM_INDEX" != 0 ] || touch "$SROCE_OUT/prof.start"
else
	echo "# prof: no $TOOL client seen" >&2
fi
wait $pid
rc=$?
touch "$SROCE_OUT/prof.stop"
cat "$SROCE_OUT/bench.txt" 2>/dev/null
exit $rc
