#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The README's test command (`make check`, run by .ci/run): installs what is
# missing, builds, lints, runs KUnit in the debug kernel and the functional
# tests in the Debian kernel and the debug kernel, and ends with one line
# "N passed, N failed". Every "ok"/"not ok" line a guest prints is a test;
# every VM run is one more, failing on a non-zero exit or any kernel splat.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
res=${SROCE_RESULTS:-$top/build/results}
rm -rf "$res"
mkdir -p "$res"
cd "$top"

passed=0
failed=0
# What the capture of rc.sh's rdma_cm, rping and pingpong runs must hold.
PCAP_WANT="RC SEND_FIRST,RC SEND_MIDDLE,RC SEND_LAST,RC SEND_ONLY"
PCAP_WANT+=",RC WRITE_FIRST,RC WRITE_MIDDLE,RC WRITE_LAST,RC WRITE_ONLY"
PCAP_WANT+=",RC READ_REQUEST,RC READ_RESPONSE_FIRST,RC READ_RESPONSE_MIDDLE"
PCAP_WANT+=",RC READ_RESPONSE_LAST,RC READ_RESPONSE_ONLY,RC ACKNOWLEDGE"
PCAP_WANT+=",RC COMPARE_SWAP,RC FETCH_ADD,RC ATOMIC_ACKNOWLEDGE"
PCAP_WANT+=",UD SEND_ONLY,UD SEND_ONLY_IMM"	# (udaddy sends with immediate)
t0=$(date +%s)

pass() { passed=$((passed + 1)); echo "PASS $*"; }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }

# step NAME CMD...: one test; the command's output goes to a log, shown on
# failure.
step() {
	local name=$1 log s
	shift
	log=$res/$(echo "$name" | tr -c 'a-zA-Z0-9\n' '_' | cut -c1-60).log
	s=$(date +%s)
	if "$@" >"$log" 2>&1; then
		pass "$name ($(($(date +%s) - s)) s)"
	else
		fail "$name ($(($(date +%s) - s)) s), log: $log"
		tail -n 40 "$log" | sed 's/^/    /'
	fi
}

# Count the TAP lines of a guest's results file as tests.
count_tap() {
	local file=$1 prefix=$2 line
	if [ ! -s "$file" ]; then
		fail "$prefix: no results from the guest"
		return
	fi
	while IFS= read -r line; do
		case $line in
		"ok - "*) pass "$prefix: ${line#ok - }" ;;
		"not ok - "*) fail "$prefix: ${line#not ok - }" ;;
		esac
	done < <(tr -d '\r' <"$file")
}

# vm NAME KERNEL VMS SCRIPT...: run a guest script; count the VM run and
# every check the guests report.
vm() {
	local name=$1 kernel=$2 vms=$3 dir i
	shift 3
	dir=$res/$name
	step "$name: guest exit 0, no kernel splat" \
		"$here/vm-run.sh" --kernel "$kernel" --vms "$vms" --out "$dir" \
		--timeout "${SROCE_VM_TIMEOUT:-1500}" -- "$@"
	for ((i = 0; i < vms; i++))
		do count_tap "$dir/vm$i/tap.log" "$name[vm$i]"
	done
}

step "dependencies installed" "$here/deps.sh"
step "build against Debian 6.1 headers, W=1 clean" "$here/build.sh" debian
step "sparse (C=2) clean" "$here/build.sh" debian C=2
step "checkpatch --strict clean" "$here/lint.sh"
step "wire.h user-space self-test" \
	bash -c "make -s -C '$top/tools' && '$top/tools/sroce-wirecheck' --selftest"
step "debug kernel built or cached" "$here/debug-kernel.sh"
step "build against the debug kernel (with KUnit), W=1 clean" "$here/build.sh" debug

# KUnit in the debug kernel: every test case counts.
vm kunit debug 1 "$top/tests/guest/run.sh" kunit.sh
if [ -s "$res/kunit/vm0/kunit.log" ]; then
	kunit_py=$("$here/debug-kernel.sh")/src/tools/testing/kunit/kunit.py
	python3 "$kunit_py" parse "$res/kunit/vm0/kunit.log" >"$res/kunit/parsed.log" 2>&1
	while IFS= read -r line; do
		case $line in
		*"[PASSED]"*) pass "kunit: ${line##*\[PASSED\] }" ;;
		*"[FAILED]"*|*"[CRASHED]"*) fail "kunit: ${line##*\] }" ;;
		esac
	done < <(sed 's/\x1b\[[0-9;]*m//g' "$res/kunit/parsed.log" | grep -E '\[(PASSED|FAILED|CRASHED)\] [a-z_0-9]+$' | grep -v '\] sroce_[a-z]*$')
	grep -q 'Testing complete' "$res/kunit/parsed.log" || fail "kunit: results parsed"
else
	fail "kunit: no KTAP output from the guest"
fi

vm functional-debian debian 1 "$top/tests/guest/run.sh" functional.sh
vm functional-debug debug 1 "$top/tests/guest/run.sh" functional.sh
vm rx-two-vms debian 2 "$top/tests/guest/run.sh" rx.sh
vm rx-two-vms-debug debug 2 "$top/tests/guest/run.sh" rx.sh

# The RC data path: the error paths and atomics (pyverbs), and the
# perftest/rping/pingpong suite between two sroce guests in both kernels
# (every tool swept to 8 MiB in the Debian kernel; to 64 KiB in the debug
# kernel, where -a takes minutes per tool under TCG);
# in the Debian kernel only, interop with rdma_rxe (whose own receive
# path trips KASAN in the debug kernel), a capture of that traffic decoded
# by tshark, and the integrity tool, clean and through netem.
vm rc-debian debian 2 "$top/tests/guest/run.sh" rc.sh sroce sroce ci
step "tshark: the capture of sroce traffic decodes as RoCEv2, ICRCs right" \
	python3 "$here/pcap-check.py" "$res/rc-debian/vm0/roce.pcap" \
	--want "$PCAP_WANT"
vm interop-rxe debian 2 "$top/tests/guest/run.sh" rc.sh sroce rxe ci
step "tshark: the capture of sroce<->rxe traffic decodes, ICRCs right" \
	python3 "$here/pcap-check.py" "$res/interop-rxe/vm0/roce.pcap" \
	--want "$PCAP_WANT"
vm rc-debug debug 2 "$top/tests/guest/run.sh" rc.sh sroce sroce sweep
vm rc-errors-debian debian 1 "$top/tests/guest/run.sh" rc-errors.sh
vm rc-errors-debug debug 1 "$top/tests/guest/run.sh" rc-errors.sh
vm integrity debian 2 "$top/tests/guest/run.sh" integrity.sh sroce sroce 1G
vm integrity-netem debian 2 "$top/tests/guest/run.sh" integrity.sh sroce sroce 32M netem

# The kernel's own consumers (kernel QPs/CQs, fast registration,
# invalidation): NVMe-oF with fio verify and NFS over RDMA, sroce on both
# sides; sroce against rdma_rxe, each in the other role; and the debug
# kernel with smaller sizes (KASAN under TCG moves about 1 MB/s).
vm ulp-debian debian 2 "$top/tests/guest/run.sh" ulp.sh sroce sroce 256M sroce sroce 32M
vm ulp-rxe debian 2 "$top/tests/guest/run.sh" ulp.sh sroce rxe 32M rxe sroce 8M
vm ulp-debug debug 2 "$top/tests/guest/run.sh" ulp.sh sroce sroce 8M sroce sroce 4M

echo "check: $(($(date +%s) - t0)) s, results in $res"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
