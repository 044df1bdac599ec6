#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Helpers for guest-side tests: TAP-style results, module setup, waits.
# Sourced by the scripts in this directory; runs inside a test VM only.

SROCE_BUILD=${SROCE_TREE:?}/build/${SROCE_KERNEL:?}
PY=/usr/bin/python3	# Debian's python sees python3-pyverbs
T_FAILED=0

ok() { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; T_FAILED=$((T_FAILED + 1)); }

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
	mkdir -p /tmp/mods/upper /tmp/mods/work
	mount -t overlay overlay \
		-o lowerdir=/lib/modules,upperdir=/tmp/mods/upper,workdir=/tmp/mods/work \
		/lib/modules || return 1
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

dev_exists() { [ -e "/sys/class/infiniband/$1" ]; }

# The value of FIELD in `ibv_devinfo -v -d DEV` (first match).
devinfo_field() {
	ibv_devinfo -v -d "$1" 2>/dev/null |
		sed -n "s/^[[:space:]]*$2:[[:space:]]*//p" | head -n1
}
# Checks run some of these under `bash -c`.
export -f dev_exists devinfo_field

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
	echo scan >$KMEMLEAK
	sleep 5
	echo scan >$KMEMLEAK
	cp $KMEMLEAK "$SROCE_OUT/kmemleak.txt"
	t "kmemleak: no leaks" test ! -s "$SROCE_OUT/kmemleak.txt"
	head -n 60 "$SROCE_OUT/kmemleak.txt" | sed 's/^/# /'
}

finish() {
	echo "# $T_FAILED check(s) failed"
	[ "$T_FAILED" -eq 0 ]
}
