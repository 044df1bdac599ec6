#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Load sroce_kunit.ko in the debug kernel; its suites run at load and print
# KTAP to the kernel log, which is kept in $SROCE_OUT/kunit.log for the host
# to parse.
set -u
. "$(dirname "$0")/lib.sh"

t "install sroce.ko and sroce_kunit.ko" install_sroce
t "sroce_kunit.ko loads (suites run)" modprobe sroce_kunit
dmesg >"$SROCE_OUT/kunit.log"
t "KTAP totals printed" grep -q '# Totals:' "$SROCE_OUT/kunit.log"
t "sroce_kunit unloads" rmmod sroce_kunit
t "sroce unloads" rmmod sroce
finish
