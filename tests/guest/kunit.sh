#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Load sroce_kunit.ko in the debug kernel; its suites run at load and print
# KTAP to the kernel log, which is kept in $SROCE_OUT/kunit.log for the host
# to parse.
set -u
. "$(dirname "$0")/lib.sh"

t "install sroce.ko and sroce_kunit.ko" install_sroce
before=$(dmesg | wc -l)
t "sroce_kunit.ko loads (suites run)" modprobe sroce_kunit
# Only this module's KTAP, under one top-level header (the boot-time "1..0"
# of the built-in tests would end kunit.py's parse early). Newer kernels
# (7.x) print the module's own header; older ones need one added.
dmesg | tail -n +$((before + 1)) | sed 's/^\[[^]]*\] //' >/tmp/ktap
if grep -q '^KTAP version' /tmp/ktap; then
	sed -n '/^KTAP version/,$p' /tmp/ktap >"$SROCE_OUT/kunit.log"
else
	{
		echo "KTAP version 1"
		echo "1..$(grep -c '^    # Subtest:' /tmp/ktap)"
		cat /tmp/ktap
	} >"$SROCE_OUT/kunit.log"
fi
t "KTAP totals printed" grep -q '# Totals:' "$SROCE_OUT/kunit.log"
t "sroce_kunit unloads" rmmod sroce_kunit
t "sroce unloads" rmmod sroce
finish
