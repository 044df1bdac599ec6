#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Invalidations racing through a live device, in the debug kernel (the one
# with KUnit, so the one sroce_invtest.ko is built for): the module, a
# kernel ULP, posts two SEND_WITH_INVs on two RC QPs of one PD and a
# LOCAL_INV of the same fast-registration MR at once, round after round
# for SECS seconds, all over sroce0's same-host path. Exactly one may win
# each round and every one must complete; a CPU left spinning with BHs off
# would be reported by the soft-lockup and RCU stall detectors, which the
# host reads the log for. In one guest.
#   usage: invrace.sh [SECS]  (20)
set -u
# shellcheck source=tests/guest/lib.sh
. "$(dirname "$0")/lib.sh"
secs=${1:-20}

kmemleak_clear
t "install sroce.ko for modprobe, rdma link add sroce0" setup_rdma sroce
before=$(dmesg | wc -l)
# A round that cannot finish leaves the loader in the module's init: bound
# it well past SECS plus the module's own 10 s wait per round.
t "sroce_invtest: every round has exactly one invalidation win, all complete" \
	timeout -k 5 $((secs + 60)) modprobe sroce_invtest dev=sroce0 secs="$secs"
dmesg | tail -n +$((before + 1)) | grep 'sroce_invtest' | sed 's/^/# /'
t "sroce_invtest unloads" rmmod sroce_invtest
t "rdma link delete sroce0" timeout 60 rdma link delete sroce0
t "rmmod sroce" timeout 60 rmmod sroce
kmemleak_check
finish
