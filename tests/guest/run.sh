#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest entry point used by scripts/check.sh: run.sh SCRIPT [ARGS...] runs a
# script of this directory and keeps its TAP lines in $SROCE_OUT/tap.log.
# run.sh S1 [ARGS...] + S2 [ARGS...] ... runs several in turn in one boot
# (a debug guest takes minutes to boot under TCG); each later one runs
# whatever the earlier ones left behind, with a barrier directory of its
# own; part N's TAP lines are also in tap.N.log, and the exit status is the
# first non-zero one.
set -uo pipefail
here=$(dirname "$0")
shared=${SROCE_SHARED:-}
rc=0 part=0 st=0
: >"${SROCE_OUT:?}/tap.log"
while [ $# -gt 0 ]; do
	cmd=()
	while [ $# -gt 0 ] && [ "$1" != + ]; do cmd+=("$1"); shift; done
	[ $# -eq 0 ] || shift
	part=$((part + 1))
	# Two guests meet through files named by step; each part starts
	# from an empty directory so that its names cannot meet old ones.
	[ -z "$shared" ] || [ $part -eq 1 ] || export SROCE_SHARED=$shared-part$part
	: >"$SROCE_OUT/tap.$part.log"
	# Only the last part scans for leaks (lib.sh's kmemleak_check).
	if [ $# -gt 0 ]; then
		export SROCE_KMEMLEAK_LATER=1
	else
		export SROCE_KMEMLEAK_LATER=0
	fi
	"$here/${cmd[0]}" "${cmd[@]:1}" 2>&1 |
		tee -a "$SROCE_OUT/tap.log" "$SROCE_OUT/tap.$part.log"
	st=${PIPESTATUS[0]}
	[ $rc -ne 0 ] || rc=$st
done
exit $rc
