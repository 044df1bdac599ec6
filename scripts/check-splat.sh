#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Fail (exit 1) if any kernel log given shows a warning, bug, sanitizer,
# lockdep, kmemleak, panic, hang or stall report; print those lines with some
# context. Patterns follow the kernel's own report headers so that harmless
# lines (module taint notices, "RETBleed: WARNING: ...") do not match.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 FILE..." >&2; exit 2; }

patterns=(
	'WARNING: CPU: [0-9]+ PID: '
	'-+\[ cut here \]-+'
	'\bBUG: '			# incl. KASAN, sleeping in atomic, soft lockup
	'kernel BUG at '
	'Oops: [0-9a-f]+ \[#[0-9]+\]'
	# The kernel's own; not "traps: tool[pid] general protection fault
	# ip:... in lib.so", a user-space crash the tests judge themselves.
	'general protection fault(, [^:]*)?: [0-9a-f]+ \[#[0-9]+\]'
	'UBSAN: '
	'WARNING: .*(lock|RCU)'		# lockdep headers: circular/recursive ...
	'turning off the locking correctness validator'
	'unreferenced object 0x'
	'kmemleak: [0-9]+ new suspected memory leaks'
	'Kernel panic - not syncing'
	'blocked for more than [0-9]+ seconds'
	'soft lockup - CPU#'
	'rcu_[a-z_]+ (self-)?detected stall'
	# A NIC whose transmit queue stopped for good: every test after it
	# fails for want of a network, so say so where it started.
	'NETDEV WATCHDOG: .*timed out'
)
re=$(IFS='|'; echo "${patterns[*]}")

status=0
for f in "$@"; do
	if hits=$(grep -a -n -E -B2 -A6 -e "$re" "$f"); then
		echo "check-splat: $f:"
		head -n 80 <<< "$hits" | tr -d '\r'
		status=1
	elif [ $? -gt 1 ]; then
		exit 2	# unreadable log: no verdict
	fi
done
exit $status
