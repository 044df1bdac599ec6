#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rping.sh ARGS...: rping ARGS, with rping's own exit race told apart from
# a hang.
#
# Since linux-rdma/rdma-core#1622 (sid's 65 has it; bookworm's 44 and
# trixie's 56 do not), rping's CM thread waits in poll() on the event
# channel and an eventfd that the main thread writes once it has torn
# everything down,
# then fetches an event with a blocking rdma_get_cm_event(). An event
# that arrives during the teardown (the peer's DISCONNECTED, answering our
# own disconnect) wakes the poll, and rdma_destroy_id() may discard it
# before the fetch: the fetch then waits forever, and so does the main
# thread in pthread_join(). Nothing of the device is left by then: no QP,
# no cm_id; the tool's work is done. Seen after 12 runs in one boot and
# 245 in another of "rping -C 20" between two namespaces of a 7.2 guest
# on a loaded host; never in 150 runs on an idle one.
#
# So when rping is found in that state (its binary has the eventfd, no QP
# or cm_id of its own left, a thread in ucma_get_event) for 2 s in a row,
# it is killed, and exits 0 if it printed nothing but its usual end
# messages, else 1; a line says so. Any other way it ends is its own.
set -u

err=$(mktemp /tmp/rping-err.XXXXXX)
rping "$@" 2> >(tee "$err" >&2) &
pid=$!
trap 'kill "$pid" 2>/dev/null' TERM INT

eventfd=false
grep -aq 'Failed to signal CM thread' "$(command -v rping)" && eventfd=true

# Whether rping waits where only its exit race leaves it. The thread in
# ucma_get_event first: a read of /proc, where the rdma tool would cost
# the guest a process twice a second all through the run.
stuck() {
	local t w fetching=false
	for t in /proc/"$pid"/task/*; do
		# wchan has no newline: read fails at its end, w is set.
		w=
		read -r w <"$t/wchan" 2>/dev/null
		[ "$w" = ucma_get_event ] && fetching=true
	done
	$fetching || return 1
	rdma resource show qp 2>/dev/null | grep -qE " pid $pid( |$)" && return 1
	! rdma resource show cm_id 2>/dev/null | grep -qE " pid $pid( |$)"
}

race=false n=0
while $eventfd && kill -0 "$pid" 2>/dev/null; do
	sleep 0.5
	if stuck; then
		n=$((n + 1))
	else
		n=0
	fi
	if [ $n -ge 4 ]; then
		race=true
		kill "$pid" 2>/dev/null
		break
	fi
done
wait "$pid"
rc=$?
# tee has what rping wrote once rping is gone (a little later).
for _ in $(seq 20); do
	pgrep -P $$ -x tee >/dev/null || break
	sleep 0.1
done
if $race; then
	if grep -vqE '^((server|client) DISCONNECT EVENT\.\.\.|wait for RDMA_READ_ADV state 10)$' "$err"; then
		echo "# rping.sh: rping hung in its exit race after reporting an error"
		rc=1
	else
		echo "# rping.sh: rping done (no QP, no cm_id, no error), its CM thread waiting for an event its teardown discarded: rping's exit race, killed"
		rc=0
	fi
	[ -z "${SROCE_OUT:-}" ] || echo "rpingexit rping $*" >>"$SROCE_OUT/retries.log"
fi
rm -f "$err"
exit $rc
