#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest entry point used by scripts/check.sh: run.sh SCRIPT [ARGS...] runs a
# script of this directory and keeps its TAP lines in $SROCE_OUT/tap.log.
set -uo pipefail
"$(dirname "$0")/$1" "${@:2}" 2>&1 | tee "${SROCE_OUT:?}/tap.log"
exit "${PIPESTATUS[0]}"
