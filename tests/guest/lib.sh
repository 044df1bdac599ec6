#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Helpers for guest-side tests: TAP-style results, module setup, waits.
# Sourced by the scripts in this directory; runs inside a test VM only.

SROCE_BUILD=${SROCE_TREE:?}/build/${SROCE_KERNEL:?}
PY=/usr/bin/python3	# Debian's python sees python3-pyverbs
T_FAILED=0

# Each result is also logged with the guest's uptime in $SROCE_OUT/times.log,
# so that the slow part of a long run can be found (check.sh's budget).
t_time() { read -r up _ </proc/uptime && echo "$up $*" >>"${SROCE_OUT:-/tmp}/times.log"; }
ok() { echo "ok - $*"; t_time "ok - $*"; }
not_ok() { echo "not ok - $*"; t_time "not ok - $*"; T_FAILED=$((T_FAILED + 1)); }

# t NAME CMD...: one check, passes when CMD exits 0; its output goes to the
# console only when it fails.
t() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		ok "$name"
	else
		not_ok "$name"
		printf '%s\n' "$out" | sed 's/^/#   /' | tail -n 40
	fi
}

# Expect CMD to fail.
t_fails() {
	local name=$1
	shift
	if "$@" >/dev/null 2>&1; then not_ok "$name"; else ok "$name"; fi
}

# Wait up to $1 seconds for CMD to succeed.
wait_for() {
	local secs=$1 i
	shift
	for ((i = 0; i < secs * 10; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

# Make sroce.ko visible to modprobe (and so to `rdma link add`'s autoload)
# through an overlay on the read-only /lib/modules.
install_sroce() {
	local kver
	kver=$(uname -r)
	# Once per boot (run.sh may run several scripts in one).
	if ! [ -d /tmp/mods/upper ]; then
		mkdir -p /tmp/mods/upper /tmp/mods/work
		mount -t overlay overlay \
			-o lowerdir=/lib/modules,upperdir=/tmp/mods/upper,workdir=/tmp/mods/work \
			/lib/modules || return 1
	fi
	mkdir -p "/lib/modules/$kver/extra"
	cp "$SROCE_BUILD"/*.ko "/lib/modules/$kver/extra/"
	# The index build.sh made for this kernel, else depmod here (slow).
	if [ "$(cat "$SROCE_BUILD/modindex/release" 2>/dev/null)" = "$kver" ]; then
		cp "$SROCE_BUILD"/modindex/modules.* "/lib/modules/$kver/" ||
			return 1
	else
		depmod -a || return 1
	fi
	modprobe ib_uverbs
}

# rdma_core_suite DEV: rdma-core's own test suite, as this userland's
# python3-pyverbs ships it, run unchanged against DEV (rdma_core_suite.py
# leaves out, by name, the few tests that crash the interpreter on any
# non-mlx5 device in a given release): every test that does not skip
# itself (mlx5 only, ODP, XRC, device memory, ...) must pass. One TAP
# line; skips are listed with their reasons, the log is kept in $SROCE_OUT.
rdma_core_suite() {
	local dev=$1 rc ver
	# (/var, and dpkg's database with it, is a tmpfs in the guests.)
	ver=$(zcat /usr/share/doc/rdma-core/changelog.Debian.gz 2>/dev/null |
		sed -n '1s/^rdma-core (\([^)]*\)).*/\1/p')
	modprobe rdma_ucm 2>/dev/null	# (its features are probed)
	rm -rf /tmp/rct && cp -r /usr/share/doc/rdma-core/tests /tmp/rct &&
		gunzip -f /tmp/rct/*.gz &&
		(cd /tmp/rct && timeout -k 5 900 "$PY" -X faulthandler \
			"$SROCE_TREE/tests/pyverbs/rdma_core_suite.py" /tmp/rct \
			--dev "$dev" -v) >/tmp/rct.log 2>&1
	rc=$?
	cp /tmp/rct.log "$SROCE_OUT/rdma-core-tests-$dev.log" 2>/dev/null
	echo "# rdma-core $ver tests: $(grep -E '^Ran [0-9]+ tests' /tmp/rct.log) $(tail -n 5 /tmp/rct.log | grep -E '^(OK|FAILED)')"
	grep '^left out: ' /tmp/rct.log | sed 's/^/# /'
	grep -o "skipped '[^']*'" /tmp/rct.log | sort | uniq -c | sort -rn | sed 's/^/#   /'
	if [ $rc -eq 0 ]; then
		ok "rdma-core's own pyverbs tests pass on $dev (rdma-core $ver)"
	else
		not_ok "rdma-core's own pyverbs tests pass on $dev (rdma-core $ver, exit $rc)"
		grep -E '^(ERROR|FAIL):' /tmp/rct.log | sed 's/^/#   /'
		tail -n 60 /tmp/rct.log | sed 's/^/#   /'
	fi
}

dev_exists() { [ -e "/sys/class/infiniband/$1" ]; }

# The value of FIELD in `ibv_devinfo -v -d DEV` (first match).
devinfo_field() {
	ibv_devinfo -v -d "$1" 2>/dev/null |
		sed -n "s/^[[:space:]]*$2:[[:space:]]*//p" | head -n1
}
# Checks run some of these under `bash -c`.
export -f dev_exists devinfo_field

# The 16-byte GID that an address maps to, as sysfs prints it.
gid_of() {
	# From the bytes: Python 3.13 writes an IPv4-mapped address's
	# exploded form with a dotted quad.
	"${PY:-python3}" -c 'import ipaddress, sys
a = ipaddress.ip_address(sys.argv[1])
if a.version == 4:
    a = ipaddress.IPv6Address("::ffff:" + str(a))
b = a.packed
print(":".join(b[i:i + 2].hex() for i in range(0, 16, 2)))' "$1"
}

# One look at the table; prints the index or fails. The table has 1024
# entries and sysfs is slow under TCG, so it is read with the shell's own
# read, in index order, without a process per entry.
# gid_lookup DEV GID: the index of GID as a RoCE v2 entry of DEV.
gid_lookup() {
	local dir=/sys/class/infiniband/$1/ports/1 want=$2 i n g ty
	n=$(find "$dir/gids" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
	for ((i = 0; i < n; i++)); do
		read -r g <"$dir/gids/$i" 2>/dev/null || continue
		[ "$g" = "$want" ] || continue
		read -r ty <"$dir/gid_attrs/types/$i" 2>/dev/null || continue
		[ "$ty" = "RoCE v2" ] || continue
		echo "$i"
		return 0
	done
	return 1
}

# Two guests meet through files in the shared directory.
SYNC_DIR=${SROCE_SHARED:-/nonexistent}/sync

# guest_barrier NAME [SECS]: wait (bounded, 120 s by default) until the
# other guest has reached NAME too.
guest_barrier() {
	mkdir -p "$SYNC_DIR"
	touch "$SYNC_DIR/$1.${SROCE_VM_INDEX:?}"
	wait_for "${2:-120}" test -e "$SYNC_DIR/$1.$((1 - SROCE_VM_INDEX))"
}

# signal NAME / signalled NAME: a one-sided flag the other guest waits for.
signal() { mkdir -p "$SYNC_DIR" && touch "$SYNC_DIR/$1"; }
signalled() { test -e "$SYNC_DIR/$1"; }

# kmemleak_clear at the start, kmemleak_check at the end: in the debug
# kernel (the one with kmemleak) forget what boot leaked, then scan and fail
# on any report. Two scans: kmemleak reports an object only once it stays
# unreferenced.
KMEMLEAK=/sys/kernel/debug/kmemleak
kmemleak_clear() {
	[ ! -w $KMEMLEAK ] || echo clear >$KMEMLEAK
}
kmemleak_check() {
	[ -w $KMEMLEAK ] || return 0
	# A part of a run.sh boot other than the last: the last part's scans
	# report what this one leaked too (no scan in between, so no
	# kmemleak_clear hides it), and a scan costs 15 s under KASAN.
	if [ "${SROCE_KMEMLEAK_LATER:-0}" = 1 ]; then
		echo "# kmemleak: scanned at the end of the boot"
		return 0
	fi
	echo scan >$KMEMLEAK
	sleep 5
	echo scan >$KMEMLEAK
	cp $KMEMLEAK "$SROCE_OUT/kmemleak.txt"
	t "kmemleak: no leaks" test ! -s "$SROCE_OUT/kmemleak.txt"
	head -n 60 "$SROCE_OUT/kmemleak.txt" | sed 's/^/# /'
}

# counter NAME [DEV]: one of DEV's (sroce0's) port counters.
counter() { cat "/sys/class/infiniband/${2:-sroce0}/ports/1/hw_counters/$1"; }

# netem_on / netem_off: this guest's eth0 through netem: 10% of the
# packets held 1 ms while the rest go at once (reordering), 2% lost, 1%
# duplicated and 0.5% with one bit flipped. A flip in what the ICRC covers makes the
# peer's rx_icrc_errors grow; one in the IP header, the UDP checksum or
# the frame's addresses is dropped before RoCE; one in a masked BTH bit
# (FECN, BECN, reserved) changes nothing that matters.
NETEM_SPEC=(delay 1ms reorder 90% 50% loss 2% duplicate 1% corrupt 0.5%)
netem_on() { tc qdisc add dev eth0 root netem "${NETEM_SPEC[@]}"; }
netem_off() { tc qdisc del dev eth0 root; }

# account_start IP / account_check IP: every frame that arrives at eth0
# for IP on RoCEv2's port is captured between the two calls (dumpcap, which
# sees it before the IP stack does), then sorted by tools/sroce-fuzz
# --account into what Linux drops (not this MAC, IPv4, UDP) and what
# reaches sroce: malformed, ICRC error, intact. sroce0's rx_packets,
# rx_drop_malformed and rx_icrc_errors must have grown by exactly as much:
# under netem, every corrupted frame is counted where it died. A frame
# that arrives while the capture stops moves the counters between the two
# reads around the stop; the capture's figure must then lie between them.
ACCOUNT_CTRS=(rx_packets roce rx_drop_malformed malformed rx_icrc_errors icrc)
account_read() {
	local i
	for ((i = 0; i < ${#ACCOUNT_CTRS[@]}; i += 2)); do
		printf '%s ' "$(counter "${ACCOUNT_CTRS[i]}")"
	done
}
account_start() {
	dumpcap -q -p -P -B 32 -i eth0 -f "udp dst port 4791 and dst host $1" \
		-w /tmp/account.pcap >"$SROCE_OUT/account-dumpcap.log" 2>&1 &
	ACCOUNT_PID=$!
	t "dumpcap capturing the RoCEv2 frames that arrive for $1" \
		wait_for 60 grep -q "^Capturing on 'eth0'" "$SROCE_OUT/account-dumpcap.log"
	read -ra ACCOUNT_BEFORE <<<"$(account_read)"
}
in_range() { [ -n "$2" ] && [ "$1" -le "$2" ] && [ "$2" -le "$3" ]; }
account_check() {
	local b1 b2 got i k n lo hi
	read -ra b1 <<<"$(account_read)"
	kill -INT "$ACCOUNT_PID"
	wait "$ACCOUNT_PID"
	read -ra b2 <<<"$(account_read)"
	sed 's/^/# dumpcap: /' "$SROCE_OUT/account-dumpcap.log"
	got=$("$SROCE_TREE/tools/sroce-fuzz" --account /tmp/account.pcap \
		--dst "$1" --dmac "$(cat /sys/class/net/eth0/address)")
	echo "# account: $got"
	for ((i = 0; i < ${#ACCOUNT_CTRS[@]}; i += 2)); do
		k=${ACCOUNT_CTRS[i + 1]}
		n=$(sed -n "s/.* $k=\([0-9]*\).*/\1/p" <<<"$got")
		lo=$((b1[i / 2] - ACCOUNT_BEFORE[i / 2]))
		hi=$((b2[i / 2] - ACCOUNT_BEFORE[i / 2]))
		t "${ACCOUNT_CTRS[i]} +$lo$([ "$hi" = "$lo" ] || echo "..$hi"): what the capture says ($k=${n:-?})" \
			in_range "$lo" "$n" "$hi"
	done
	rm -f /tmp/account.pcap
}

# trace_on EVENT... / trace_off NAME: sroce's tracepoints (sroce_tx,
# sroce_qp_state, ...: drivers/sroce/trace.h) on, into an emptied buffer of
# 8 MiB per CPU; then all off, what they logged kept in
# $SROCE_OUT/trace-NAME.txt, and whether the buffer lost none of it.
# trace_count NAME PATTERN: how many of the kept events match PATTERN.
TRACEFS=/sys/kernel/tracing
trace_on() {
	local e
	mountpoint -q $TRACEFS || mount -t tracefs nodev $TRACEFS || return 1
	echo 0 >$TRACEFS/tracing_on && echo 8192 >$TRACEFS/buffer_size_kb &&
		: >$TRACEFS/trace || return 1
	for e; do
		echo 1 >"$TRACEFS/events/sroce/$e/enable" || return 1
	done
	echo 1 >$TRACEFS/tracing_on
}
trace_off() {
	echo 0 >$TRACEFS/tracing_on
	echo 0 >$TRACEFS/events/sroce/enable
	grep -v '^#' $TRACEFS/trace >"$SROCE_OUT/trace-$1.txt"
	t "trace: no event of the run lost (overrun 0 on every CPU)" \
		bash -c "! grep -h '^overrun:' $TRACEFS/per_cpu/cpu*/stats | grep -qv ' 0$'"
	echo 1 >$TRACEFS/tracing_on
}
trace_count() { grep -c -- "$2" "$SROCE_OUT/trace-$1.txt"; }

# faults_on PCT / faults_off: failslab and fail_page_alloc (the debug
# kernel's fault injection) fail PCT% of the slab and page allocations
# made by tasks marked with make-it-fail (/proc/<pid>/make-it-fail, which
# sroce-stress --faults sets for its worker threads) while sroce's code
# is on their stack (the stack filter spans sroce's text); sleeping
# allocations too. faults_off prints how many were failed. Kernel
# threads and softirqs are never marked, so only the marked process's
# system calls into sroce see failures.
FAULTS=/sys/kernel/debug
FAULT_TIMES=100000000
faults_on() {
	local pct=$1 f lo hi
	if [ ! -d $FAULTS/failslab ] || [ ! -d $FAULTS/fail_page_alloc ]; then
		echo "no failslab and fail_page_alloc in $FAULTS (CONFIG_FAULT_INJECTION_DEBUG_FS)"
		return 1
	fi
	# sroce's text: its lowest and highest text symbol, the last one's
	# length unknown (a page covers it).
	read -r lo hi < <(awk '$4 == "[sroce]" && ($2 == "t" || $2 == "T") { print $1 }' \
		/proc/kallsyms | sort | sed -n '1p;$p' | tr '\n' ' ')
	if [ -z "$lo" ] || [ -z "$hi" ]; then
		echo "no text symbol of sroce's in /proc/kallsyms"
		return 1
	fi
	for f in failslab fail_page_alloc; do
		f=$FAULTS/$f
		echo Y >"$f/task-filter"
		echo 0 >"$f/verbose"
		echo 1 >"$f/interval"
		echo 0 >"$f/space"
		echo N >"$f/ignore-gfp-wait"
		echo 32 >"$f/stacktrace-depth"
		echo "0x$lo" >"$f/require-start"
		printf '0x%x\n' "$((0x$hi + 4096))" >"$f/require-end"
		echo $FAULT_TIMES >"$f/times"
		echo "$pct" >"$f/probability"
	done
	echo N >$FAULTS/fail_page_alloc/ignore-gfp-highmem
	echo 0 >$FAULTS/fail_page_alloc/min-order
}
faults_off() {
	local f n total=0
	for f in failslab fail_page_alloc; do
		echo 0 >"$FAULTS/$f/probability"
		n=$((FAULT_TIMES - $(cat "$FAULTS/$f/times")))
		echo "# $f: $n allocations failed"
		total=$((total + n))
		echo 0 >"$FAULTS/$f/times"
	done
	FAULTS_FAILED=$total
}
# faults_start [PCT] / faults_end [PCT]: around a tool run, with PCT,
# faults_on and faults_off as checks (some allocations must have failed)
# and FAULT_ARGS=(--faults) for the tool; without PCT, nothing.
faults_start() {
	FAULT_ARGS=()
	[ -n "${1:-}" ] || return 0
	t "fault injection: failslab and fail_page_alloc at $1% in sroce's calls" \
		faults_on "$1"
	# shellcheck disable=SC2034 # the caller's
	FAULT_ARGS=(--faults)
}
faults_end() {
	[ -n "${1:-}" ] || return 0
	faults_off
	t "fault injection: allocations failed in sroce's calls ($FAULTS_FAILED)" \
		test "$FAULTS_FAILED" -gt 0
}

finish() {
	echo "# $T_FAILED check(s) failed"
	[ "$T_FAILED" -eq 0 ]
}
