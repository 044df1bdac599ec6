#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Helpers for guest-side tests: TAP-style results, module setup, waits.
# Sourced by the scripts in this directory; runs inside a test VM only.

SROCE_BUILD=${SROCE_TREE:?}/build/${SROCE_KERNEL:?}
PY=/usr/bin/python3	# Debian's python sees python3-pyverbs
# rping, its own exit race told from a hang (see there).
RPING=$SROCE_TREE/tests/guest/rping.sh
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

# install_siw: load the soft-iWARP driver that scripts/siw.sh built out of
# tree for this kernel (Debian builds none), after the modules it needs.
install_siw() {
	local ko=$SROCE_TREE/build/siw-$SROCE_KERNEL/siw.ko d
	[ -d /sys/module/siw ] && return 0
	if [ ! -f "$ko" ]; then
		echo "install_siw: no $ko (scripts/siw.sh $SROCE_KERNEL builds it)" >&2
		return 1
	fi
	for d in $(modinfo -F depends "$ko" | tr , ' '); do
		modprobe "$d" || return 1
	done
	insmod "$ko" && modprobe ib_uverbs
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

# cm_trace_on / cm_trace_dump / cm_trace_off: record rdma_cm's and ib_cm's
# trace events, and (where kprobes exist) the result of every rdma_ucm
# command, so that a connection refused for no reason shows who refused
# it. Seen once in CI (debug kernel, chaos.sh): a client's REQ rejected
# with reason 28 (consumer defined) while its server, listening, never saw
# the request. librdmacm destroys a request it fails to set up and reads
# on, so the server cannot tell; the kernel's side of it is in this trace.
TRACEFS=/sys/kernel/tracing
tracefs_mount() {
	mountpoint -q $TRACEFS || mount -t tracefs nodev $TRACEFS
}
cm_trace_on() {
	tracefs_mount 2>/dev/null
	[ -w $TRACEFS/trace ] || return 0
	local e
	# (trace_off leaves tracing on; a failed trace_on may not have)
	echo 1 >$TRACEFS/tracing_on
	for e in rdma_cma ib_cma; do
		[ ! -d $TRACEFS/events/$e ] || echo 1 >$TRACEFS/events/$e/enable
	done
	# shellcheck disable=SC2016 # $retval is the kprobe's, not the shell's
	if [ -w $TRACEFS/kprobe_events ] &&
	   echo 'p:sroce_ucma ucma_write cmd=+u0($arg2):u32' >>$TRACEFS/kprobe_events 2>/dev/null &&
	   echo 'r:sroce_ucma_ret ucma_write ret=$retval' >>$TRACEFS/kprobe_events 2>/dev/null; then
		echo 1 >$TRACEFS/events/kprobes/sroce_ucma/enable
		echo 1 >$TRACEFS/events/kprobes/sroce_ucma_ret/enable
	fi
	cm_trace_clear
}
# cm_trace_clear: forget the events so far (a round starts).
cm_trace_clear() { [ ! -w $TRACEFS/trace ] || : >$TRACEFS/trace; }
# cm_trace_dump LABEL: the last events, as TAP comments.
cm_trace_dump() {
	[ -r $TRACEFS/trace ] || return 0
	echo "# $1: rdma_cm ids:"
	rdma resource show cm_id 2>&1 | sed 's/^/#   /'
	echo "# $1: the last rdma_cm/ib_cm events (ucma cmd 12 GET_EVENT, 19 QUERY, 1 DESTROY_ID):"
	grep -v '^#' $TRACEFS/trace | tail -n 150 | sed 's/^/#   /'
}
cm_trace_off() {
	[ -w $TRACEFS/trace ] || return 0
	local e
	for e in rdma_cma ib_cma; do
		[ ! -d $TRACEFS/events/$e ] || echo 0 >$TRACEFS/events/$e/enable
	done
	if [ -d $TRACEFS/events/kprobes/sroce_ucma ]; then
		echo 0 >$TRACEFS/events/kprobes/sroce_ucma/enable
		echo 0 >$TRACEFS/events/kprobes/sroce_ucma_ret/enable
		echo '-:sroce_ucma' >>$TRACEFS/kprobe_events
		echo '-:sroce_ucma_ret' >>$TRACEFS/kprobe_events
	fi
}

# counter NAME [DEV]: one of DEV's (sroce0's) port counters.
counter() { cat "/sys/class/infiniband/${2:-sroce0}/ports/1/hw_counters/$1"; }

# netem_on / netem_off: this guest's eth0 through netem: 10% of the
# packets held 1 ms while the rest go at once (reordering), 1% lost, 1%
# duplicated and 2% with one bit flipped. A flip in what the ICRC covers
# makes the peer's rx_icrc_errors grow; one in the IP header, the UDP
# checksum or the frame's addresses is dropped before RoCE; one in a
# masked BTH bit (FECN, BECN, reserved) changes nothing that matters.
# netem draws per skb, and for a GSO batch of frames flips a bit in the
# first frame only: at 0.5% a 4 MiB run brought 6 corrupted frames in
# 11,164, and once in CI none, so the ICRC check was never reached.
NETEM_SPEC=(delay 1ms reorder 90% 50% loss 1% duplicate 1% corrupt 2%)
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
trace_on() {
	local e
	tracefs_mount || return 1
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

# run_rounds NAME ROUNDS LOG ACTION...: the caller's round N ACTION for
# N from 0 to ROUNDS - 1, the ACTIONs in turn; bash's notes on the jobs
# it kills go to LOG.
run_rounds() {
	local name=$1 rounds=$2 log=$3 n t0=$SECONDS
	shift 3
	for ((n = 0; n < rounds; n++)); do
		round "$n" "${@:n % $# + 1:1}" 2>>"$log"
	done
	echo "# $name: $rounds rounds in $((SECONDS - t0)) s"
}

finish() {
	echo "# $T_FAILED check(s) failed"
	[ "$T_FAILED" -eq 0 ]
}

# Helpers for guest-side RDMA traffic tests between the guests of one
# vm-run.sh (or one guest talking to itself).
#
#   setup_rdma DRIVER     create the device (sroce or rxe), set DEV
#   gid_index DEV v4|v6   GID index of this guest's RoCE v2 GID
#   barrier NAME [SECS]   wait (bounded) until both guests reach it
#   pair NAME SERVER_VM SECS SERVER_CMD... -- CLIENT_CMD...
#                         run one server/client pair across the guests

# Addresses set up by guest-init.sh; the scripts sourcing this use them.
# shellcheck disable=SC2034
RDMA_ME=${SROCE_VM_INDEX:-0}
RDMA_PEER=$((1 - RDMA_ME))
MY_V4=198.18.0.$((RDMA_ME + 1))
MY_V6=2001:2::$((RDMA_ME + 1))
# shellcheck disable=SC2034 # for the scripts that source this
PEER_V4=198.18.0.$((RDMA_PEER + 1))
# shellcheck disable=SC2034 # for the scripts that source this
PEER_V6=2001:2::$((RDMA_PEER + 1))
# VLAN 7 on eth0 (vlan_up), for RoCE over a VLAN netdev's GID.
MY_VLAN_V4=198.18.7.$((RDMA_ME + 1))
RDMA_SYNC=${SROCE_SHARED:-/nonexistent}/sync
RDMA_SEQ=0		# barriers and pairs, numbered in the order both guests run them
RDMA_LOGS=${SROCE_OUT:-/tmp}/logs	# full output of every pair, kept on the host
DEV=

# vlan_up: VLAN 7 on eth0 as eth0.7 with MY_VLAN_V4; the RDMA device on
# eth0 lists that address as a GID of its own.
vlan_up() {
	modprobe 8021q 2>/dev/null
	ip link add link eth0 name eth0.7 type vlan id 7 &&
		ip addr add "$MY_VLAN_V4/24" dev eth0.7 &&
		ip link set eth0.7 up
}

# setup_rdma DRIVER [NAME]: create the RDMA device of DRIVER (sroce, rxe or
# siw) on eth0, named NAME (sroce0, rxe0 or siw0 by default), and wait for
# its port to be active. DEV is set even when this fails.
setup_rdma() {
	case $1 in
	sroce)
		DEV=${2:-sroce0}
		install_sroce || return 1
		rdma link add "$DEV" type sroce netdev eth0 || return 1
		;;
	rxe)
		DEV=${2:-rxe0}
		modprobe rdma_rxe || return 1
		rdma link add "$DEV" type rxe netdev eth0 || return 1
		;;
	siw)
		DEV=${2:-siw0}
		install_siw || return 1
		rdma link add "$DEV" type siw netdev eth0 || return 1
		;;
	*)
		echo "setup_rdma: unknown driver '$1' (sroce, rxe or siw)" >&2
		return 2
		;;
	esac
	wait_for 20 bash -c "[ \"\$(cat /sys/class/infiniband/$DEV/ports/1/state)\" = '4: ACTIVE' ]"
}

# device_up DRIVER: setup_rdma DRIVER as a check of this guest's, then one
# that the peer answers on IPv4.
device_up() {
	if setup_rdma "$1"; then
		ok "vm$SROCE_VM_INDEX: $1 device $DEV up"
	else
		not_ok "vm$SROCE_VM_INDEX: $1 device $DEV up"
	fi
	t "peer reachable over IPv4" wait_for 60 ping -c1 -W1 "$PEER_V4"
}

# teardown_rdma DRIVER: delete $DEV and unload DRIVER's module; both
# drivers bind UDP 4791, so the next test may then use the other.
teardown_rdma() {
	t "rdma link delete $DEV" rdma link delete "$DEV"
	if [ "$1" = sroce ]; then
		t "rmmod sroce" rmmod sroce
	else
		t "rmmod rdma_rxe" modprobe -r rdma_rxe
	fi
}

# gid_index DEV v4|v6: the index of the RoCE v2 GID of this guest's IPv4
# address (IPv4-mapped) or global IPv6 address; waits up to 20 s for it.
gid_index() {
	local dev=$1 want end
	case $2 in
	v4) want=$(gid_of "$MY_V4") ;;
	v6) want=$(gid_of "$MY_V6") ;;
	vlan) want=$(gid_of "$MY_VLAN_V4") ;;
	*) echo "gid_index: v4, v6 or vlan, not '$2'" >&2; return 2 ;;
	esac
	end=$((SECONDS + 20))
	while [ "$SECONDS" -lt "$end" ]; do
		gid_lookup "$dev" "$want" && return 0
		sleep 0.2
	done
	echo "gid_index: no RoCE v2 GID $want on $dev" >&2
	return 1
}

# barrier NAME [SECS]: mark this guest as having reached NAME and wait, at
# most SECS (default 120), for the other guest to reach it too. Every call
# gets the next sequence number (shared with pair), so each barrier's files
# are unique in a run and a name may be reused; vm-run.sh empties the shared
# directory before each run.
barrier() {
	local name
	RDMA_SEQ=$((RDMA_SEQ + 1))
	name=$RDMA_SEQ.$1
	mkdir -p "$RDMA_SYNC"
	touch "$RDMA_SYNC/$name.$RDMA_ME"
	wait_for "${2:-120}" test -e "$RDMA_SYNC/$name.$RDMA_PEER"
}

# The first line of a file (empty when missing).
first_line() { head -n1 "$1" 2>/dev/null; }

# pair NAME SERVER_VM SECS SERVER_CMD... -- CLIENT_CMD...
# Both guests call this with the same arguments in the same order. The
# guest SERVER_VM starts SERVER_CMD in the background, waits until it listens
# (see pair_listening) and says so through a shared file; the other guest
# waits for that and runs CLIENT_CMD. Each command runs under `timeout SECS`;
# a server still running a few seconds after its client ended is killed.
# Each side reports one TAP line, "NAME (server)" or "NAME (client)", and
# keeps its output in $RDMA_LOGS. The word @PORT@ in either command becomes
# a TCP/rdma_cm port of its own for this pair; a server with a port of its
# own that cannot be changed (udaddy) names it in PAIR_LISTEN_PORT.
# The outcome is left in PAIR_NAME, PAIR_RC, PAIR_LOG and PAIR_T0.
# A server that had to be killed fails, unless PAIR_LINGER_OK names a
# command that, given the server's log, accepts it (after a client that
# passed); PAIR_LINGER_WHY then says why, in the TAP output.
pair() {
	local name=$1 server_vm=$2 secs=$3 id port log rc s
	local -a scmd=() ccmd=()
	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do scmd+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	ccmd=("$@")
	RDMA_SEQ=$((RDMA_SEQ + 1))
	id=$RDMA_SEQ
	port=$((20000 + id))
	scmd=("${scmd[@]//@PORT@/$port}")
	ccmd=("${ccmd[@]//@PORT@/$port}")
	mkdir -p "$RDMA_SYNC" "$RDMA_LOGS"
	log=$RDMA_LOGS/$(printf '%03d' "$id")-$(echo "$name" | tr -c 'a-zA-Z0-9.=\n-' '_')
	s=$(date +%s)
	if [ "$server_vm" = "$RDMA_ME" ]; then
		log+=.server.log
		echo "# $name: server: ${scmd[*]}" >"$log"
		# stdbuf: a killed tool's progress still reaches the log.
		timeout -k 3 "$((secs + 90))" stdbuf -oL "${scmd[@]}" >>"$log" 2>&1 &
		local pid=$!
		if pair_wait_listening "${PAIR_LISTEN_PORT:-$port}" "$pid"; then
			touch "$RDMA_SYNC/$id.listening"
		else
			echo "# server exited, or not listening on port ${PAIR_LISTEN_PORT:-$port} after 30 s" >>"$log"
			touch "$RDMA_SYNC/$id.failed"
		fi
		# Until the client is done (bounded by its own timeout plus its
		# wait for us), then a few seconds' grace. The log says how long
		# a server that exited by itself took after its client.
		local deadline=$((s + secs + 180)) grace='' lingered=0 cdone=''
		while kill -0 "$pid" 2>/dev/null; do
			if [ -z "$grace" ] && [ -e "$RDMA_SYNC/$id.done" ]; then
				cdone=$(date +%s)
				grace=$((cdone + 5))
			fi
			if [ -n "$grace" ] && [ "$(date +%s)" -ge "$grace" ] ||
				[ "$(date +%s)" -ge "$deadline" ]; then
				echo "# the server is still running after the client ended; its threads:" >>"$log"
				pair_stacks "$pid" >>"$log" 2>&1
				pair_snapshot >>"$log" 2>&1
				kill "$pid" 2>/dev/null
				lingered=1
				break
			fi
			sleep 0.2
		done
		wait "$pid"
		rc=$?
		[ -z "$cdone" ] || [ "$lingered" = 1 ] ||
			echo "# server exited $(($(date +%s) - cdone)) s after the client" >>"$log"
		if [ "$lingered" = 1 ] && [ -n "${PAIR_LINGER_OK:-}" ] &&
			[ "$(first_line "$RDMA_SYNC/$id.done")" = 0 ] &&
			$PAIR_LINGER_OK "$log"; then
			echo "# tolerated: $PAIR_LINGER_WHY" >>"$log"
			echo "# $name (server): did not exit by itself; tolerated: $PAIR_LINGER_WHY"
			rc=0
		fi
		# The server's status, for the client's guest (pair_both_ok).
		echo "$rc" >"$RDMA_SYNC/$id.srv"
		# Both guests go on in step: wait for the client's verdict too.
		local left=$((deadline - $(date +%s)))
		[ "$left" -gt 0 ] || left=1
		wait_for "$left" test -e "$RDMA_SYNC/$id.done" ||
			echo "# the client never finished" >>"$log"
		PAIR_NAME="$name (server)"
	else
		log+=.client.log
		echo "# $name: client: ${ccmd[*]}" >"$log"
		if ! wait_for $((secs + 60)) pair_ready "$id"; then
			echo "# server never said it was listening" >>"$log"
			rc=125
		elif [ -e "$RDMA_SYNC/$id.failed" ]; then
			echo "# server failed to start" >>"$log"
			rc=125
		else
			pair_client "$secs" "${ccmd[@]}" >>"$log" 2>&1
			rc=$?
		fi
		echo "$rc" >"$RDMA_SYNC/$id.done"
		# And the server's status (it is killed 5 s after us at most).
		wait_for 60 test -e "$RDMA_SYNC/$id.srv" ||
			echo "# the server never finished" >>"$log"
		PAIR_NAME="$name (client)"
	fi
	PAIR_RC=$rc PAIR_LOG=$log PAIR_T0=$s
	[ -n "${PAIR_DEFER:-}" ] || pair_report_last
	[ "$rc" = 0 ]
}

# The TAP line of the last pair on this guest (pair prints it itself unless
# PAIR_DEFER is set, for a caller that may run the pair again first).
pair_report_last() { pair_report "$PAIR_NAME" "$PAIR_RC" "$PAIR_LOG" "$PAIR_T0"; }

# pair_client SECS CMD...: CMD, stopped after SECS (exit 124) once what it
# waits on is written down: its threads' stacks, and the RDMA resources
# and counters as they were while it hung (once it is killed, its QPs are
# gone). timeout(1) stops its whole process group, a little later if the
# snapshot itself hangs.
pair_client() {
	local secs=$1 pid sleeper
	shift
	timeout -k 3 "$((secs + 30))" stdbuf -oL "$@" &
	pid=$!
	sleep "$secs" &
	sleeper=$!
	wait -n "$pid" "$sleeper"
	if [ -n "$(pgrep -P "$pid")" ]; then
		echo "# still running after ${secs}s; its threads:"
		pair_stacks "$pid"
		pair_snapshot
		kill "$pid"
		wait "$pid"
		return 124
	fi
	kill "$sleeper" 2>/dev/null
	wait "$pid"
}

# pair_snapshot: the QPs of every RDMA device, with the driver's
# details, and the devices' counters.
pair_snapshot() {
	local d
	echo "# rdma resource show qp -dd:"
	rdma resource show qp -dd | sed 's/^/#   /'
	for d in /sys/class/infiniband/*; do
		[ -e "$d" ] || continue
		echo "# ${d##*/}: $(rdma statistic show link "${d##*/}/1" 2>&1)"
	done
}

# pair_stacks PID: where each process below PID (timeout(1)) and each of
# its threads wait, for a side that did not exit.
pair_stacks() {
	local c t
	for c in $(pgrep -P "$1"); do
		echo "#   pid $c: $(tr '\0' ' ' <"/proc/$c/cmdline")"
		for t in /proc/"$c"/task/*; do
			echo "#   thread ${t##*/} in $(cat "$t/wchan"):"
			sed 's/^/#     /' "$t/stack"
		done
		pair_stacks "$c"
	done
}

# pair_wait_listening PORT PID: up to 30 s, as long as PID lives.
pair_wait_listening() {
	local end=$((SECONDS + 30))
	while [ "$SECONDS" -lt "$end" ] && kill -0 "$2" 2>/dev/null; do
		pair_listening "$1" "$2" && return 0
		sleep 0.1
	done
	return 1
}

# The exit code of the client of the last pair (on either guest; empty if
# it never finished).
pair_client_rc() { first_line "$RDMA_SYNC/$RDMA_SEQ.done"; }

# pair_both_ok: both sides of the last pair exited 0. Each guest has both
# statuses once pair returns (the client's .done, the server's .srv), so
# both reach the same verdict, whichever side failed.
pair_both_ok() {
	[ "$(pair_client_rc)" = 0 ] &&
		[ "$(first_line "$RDMA_SYNC/$RDMA_SEQ.srv")" = 0 ]
}

pair_ready() { [ -e "$RDMA_SYNC/$1.listening" ] || [ -e "$RDMA_SYNC/$1.failed" ]; }

# pair_listening PORT PID: the server PID is alive and listens on PORT,
# either on TCP (perftest and ibv_*_pingpong exchange their QP numbers over
# TCP) or through rdma_cm (perftest -R, rping).
pair_listening() {
	kill -0 "$2" 2>/dev/null || return 1
	[ -n "$(ss -Hltn "sport = :$1")" ] && return 0
	rdma resource show cm_id 2>/dev/null | grep -q "state LISTEN.*src-addr .*:$1 "
}

pair_report() {
	local name=$1 rc=$2 log=$3 s=$4 took
	took=$(($(date +%s) - s))
	echo "# $name: exit $rc after ${took}s" >>"$log"
	if [ "$rc" = 0 ]; then
		ok "$name"
	else
		not_ok "$name"
		[ "$rc" != 124 ] || echo "#   timed out"
		tail -n 25 "$log" | sed 's/^/#   /'
	fi
	echo "#   ${took}s"
}

# Processes and devices, for the teardown tests (chaos.sh, chaos-peer.sh).
port_active() {
	[ "$(cat "/sys/class/infiniband/$1/ports/1/state" 2>/dev/null)" = "4: ACTIVE" ]
}
rx_packets() {
	cat "/sys/class/infiniband/$1/ports/1/hw_counters/rx_packets" 2>/dev/null || echo 0
}
alive() { kill -0 "$1" 2>/dev/null; }
# gone SECS PID...: wait until every PID has exited (bounded).
gone() {
	local secs=$1 p i
	shift
	for ((i = 0; i < secs * 10; i++)); do
		for p in "$@"; do alive "$p" && break; done
		alive "$p" || return 0
		sleep 0.1
	done
	return 1
}
# Name what a process that did not end is doing, for the log.
stuck() {
	local p
	for p in "$@"; do
		alive "$p" || continue
		echo "# pid $p ($(cat /proc/"$p"/comm 2>/dev/null)) state" \
			"$(awk '/^State/ { print $2 }' /proc/"$p"/status 2>/dev/null)"
		sed 's/^/#   /' /proc/"$p"/stack 2>/dev/null | head -n 12
	done
}

# A victim beside a hostile process (scribble.sh, stress.sh): integrity
# pairs through rdma_cm in loopback on sroce0, one run after another until
# victim_verdict stops them (at least one). Each run moves VICTIM_BYTES
# (64M; 4M in the debug kernel, where KASAN moves about 0.5 MB/s and a
# 64M run held up the end by 146 s).
#   victim_start DIR SEED     starts them, logs and exit codes in DIR
#   victim_verdict            stops them, checks every run was clean
#   victim_device_up          sroce0 for both (and the hostile process),
#                             its IPv4 GID's index in VICTIM_GI
VICTIM_BYTES=64M
[ "${SROCE_KERNEL:-}" != debug ] || VICTIM_BYTES=4M
victim_loop() {
	local dir=$1 seed=$2 n=0 srv port
	local tool=$SROCE_TREE/tools/sroce-integrity
	while :; do
		port=$((18900 + n % 50))
		"$tool" -s -b "$MY_V4" -p "$port" --listen-timeout 60 \
			--timeout 60 >"$dir/isrv.$n" 2>&1 &
		srv=$!
		# (the hostile process keeps the CPUs busy: wait for the listener)
		wait_for 30 grep -q 'server listening' "$dir/isrv.$n"
		"$tool" -c "$MY_V4" -p "$port" --bytes "$VICTIM_BYTES" \
			--max-size 256K --depth 8 --seed "$((seed + n))" \
			--timeout 60 >"$dir/icli.$n" 2>&1
		echo $? >"$dir/icli.$n.rc"
		wait "$srv"
		echo $? >"$dir/isrv.$n.rc"
		n=$((n + 1))
		[ -e "$dir/stop" ] && break
	done
}
victim_device_up() {
	t "install sroce.ko for modprobe, rdma link add sroce0, port active" \
		setup_rdma sroce
	t "modprobe rdma_ucm" modprobe rdma_ucm
	# shellcheck disable=SC2034 # for the scripts that source this
	if VICTIM_GI=$(gid_index sroce0 v4); then
		ok "RoCE v2 GID of $MY_V4 on sroce0"
	else
		not_ok "RoCE v2 GID of $MY_V4 on sroce0"
	fi
}
victim_start() {
	VICTIM_DIR=$1
	rm -f "$VICTIM_DIR/stop"
	victim_loop "$VICTIM_DIR" "$2" &
	VICTIM_PID=$!
}
victim_verdict() {
	local dir=$VICTIM_DIR runs=0 bad='' f l i
	# Each run is bounded by its --timeout: the last ends within 130 s.
	touch "$dir/stop"
	if ! gone 130 "$VICTIM_PID"; then
		not_ok "victim runs end"
		pkill -9 -P "$VICTIM_PID"
		kill -9 "$VICTIM_PID"
	fi
	wait "$VICTIM_PID" 2>/dev/null
	for f in "$dir"/icli.*.rc "$dir"/isrv.*.rc; do
		[ -e "$f" ] || continue
		runs=$((runs + 1))
		l=${f%.rc}
		if [ "$(cat "$f")" != 0 ] || ! grep -q 'mismatches=0 errors=0' "$l"; then
			bad+=" ${l##*/}"
		fi
	done
	for ((i = 0; i < runs / 2; i++)); do
		grep -h '^integrity: ops=' "$dir/icli.$i" | sed "s/^/# victim $i: /"
	done
	if [ $runs -ge 2 ] && [ -z "$bad" ]; then
		ok "victim: $((runs / 2)) integrity runs clean (exit 0, mismatches=0 errors=0)"
	else
		not_ok "victim: integrity runs clean ($((runs / 2)) runs; bad:$bad)"
		for f in $bad; do
			echo "# $f:"
			tail -n 10 "$dir/$f" | sed 's/^/#   /'
		done
	fi
}

# Around a hostile process (scribble.sh, stress.sh), with the victim:
#   victim_begin DIR SEED [FAULT_PCT]  kmemleak cleared, sroce0 up, the
#                 victim started (logs in DIR), fault injection on (faults_start)
#   hostile_run NAME LIMIT FAULT_PCT OUT ERR CMD...
#                 CMD under a timeout of LIMIT s, its output in OUT and ERR,
#                 then fault injection off (faults_end) and OUT as comments;
#                 its exit status in HOSTILE_RC, its seconds in HOSTILE_SECS
#   hostile_verdict NAME PATTERN OUT OK_NAME FAIL_NAME CMD...
#                 ok if it exited 0 and OUT has a line matching PATTERN;
#                 otherwise CMD's output (its error log's lines) as comments
#   victim_end    the victim's verdict, rdma link delete, rmmod, kmemleak,
#                 and the exit status (finish)
victim_begin() {
	mkdir -p "$1"
	kmemleak_clear
	victim_device_up
	victim_start "$1" "$2"
	faults_start "${3:-}"
}
hostile_run() {
	local name=$1 limit=$2 pct=$3 out=$4 err=$5 t0=$SECONDS
	shift 5
	timeout -k 10 "$limit" "$@" >"$out" 2>"$err"
	HOSTILE_RC=$?
	HOSTILE_SECS=$((SECONDS - t0))
	faults_end "$pct"
	sed 's/^/# /' "$out"
	echo "# $name: exit $HOSTILE_RC after $HOSTILE_SECS s"
}
hostile_verdict() {
	local name=$1 pattern=$2 out=$3 ok_name=$4 fail_name=$5
	shift 5
	if [ "$HOSTILE_RC" -eq 0 ] && grep -q "$pattern" "$out"; then
		ok "$ok_name"
	else
		not_ok "$fail_name"
		[ "$HOSTILE_RC" -ge 124 ] && echo "# $name: timed out or killed"
		"$@" | sed 's/^/#   /'
	fi
}
victim_end() {
	victim_verdict
	t "rdma link delete sroce0" timeout 60 rdma link delete sroce0
	t "rmmod sroce" timeout 60 rmmod sroce
	kmemleak_check
	finish
}
