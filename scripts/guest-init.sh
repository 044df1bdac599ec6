#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# PID 1 of a test guest started by vm-run.sh. The root is the host's / over
# read-only 9p; make the few writable places user space needs, bring up the
# link to the other guest, run $SROCE_CMD under a timeout, leave its exit code
# and the kernel log in the out share and power off.
set -euo pipefail
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/tmp
n=${SROCE_VM_INDEX:-0}
out=/mnt/out/vm$n
rc=1

# Always leave an rc and dmesg behind and power off, whatever failed: a PID 1
# that exits panics the guest and one that hangs burns the host's timeout.
finish() {
	trap - EXIT
	set +e
	kill -KILL -1 2>/dev/null	# test leftovers would keep /mnt/out busy
	echo "$rc" > "$out/rc"
	dmesg > "$out/dmesg.log"
	sync
	umount /mnt/out
	# reboot(2) in this process: with "echo o > /proc/sysrq-trigger" PID 1
	# runs on while virtio shuts down, and exec'ing or paging in anything
	# from 9p then fails, exits PID 1 and panics. If this fails too, the
	# panic (panic=-1, -no-reboot) still ends QEMU.
	busybox poweroff -f
}
trap finish EXIT

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
echo 1 > /proc/sys/kernel/sysrq	# lets a test dump tasks or locks
# On a root other than the host's the initramfs mounted the tree already;
# park that mount while tmpfs goes over /tmp, /run and /var (the tree may
# live there), since a 9p tag cannot be mounted a second time.
if mountpoint -q "$SROCE_TREE"; then
	mkdir -p /dev/.sroce-tree
	mount --move "$SROCE_TREE" /dev/.sroce-tree
fi
# A kernel other than the host's installed one brings its module tree as a
# share of its own (scripts/vm-run.sh).
if [ "${SROCE_MODS:-}" = 1 ]; then
	mount -t 9p -o ro,trans=virtio,version=9p2000.L,msize=512000,cache=loose \
		mods /lib/modules
fi
mount -t tmpfs -o mode=755 tmpfs /mnt
mkdir /mnt/out
# cache=none: each guest sees the other's barrier files at once.
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=none out /mnt/out
mkdir -p "$out"

mkdir -p /dev/pts /dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
ln -sf /proc/self/fd /dev/fd	# bash process substitution
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=755 tmpfs /run
mount -t tmpfs -o mode=755 tmpfs /var
mkdir -m 1777 /var/tmp
mkdir -p /var/log /var/lib /var/cache /var/spool /run/lock
ln -s /run /var/run
ln -s /run/lock /var/lock
# The tree gets its own share so it is there even under /tmp or /var.
mkdir -p "$SROCE_TREE"
if mountpoint -q /dev/.sroce-tree 2>/dev/null; then
	mount --move /dev/.sroce-tree "$SROCE_TREE"
else
	mount -t 9p -o ro,trans=virtio,version=9p2000.L,msize=512000,cache=loose \
		tree "$SROCE_TREE"
fi
mount -t debugfs debugfs /sys/kernel/debug
modprobe configfs 2>/dev/null || true	# built into the debug kernel
mount -t configfs configfs /sys/kernel/config

hostname "sroce-vm$n"
printf '127.0.0.1\tlocalhost\n198.18.0.1\tsroce-vm0\n198.18.0.2\tsroce-vm1\n' \
	> /run/hosts
mount --bind /run/hosts /etc/hosts
ip link set lo up
modprobe virtio_net 2>/dev/null || true	# built into the debug kernel
if ip link show eth0 >/dev/null 2>&1; then
	ip link set eth0 up
	ip addr add "198.18.0.$((n + 1))/24" dev eth0
	ip addr add "2001:2::$((n + 1))/64" dev eth0 nodad
fi

export SROCE_VM_INDEX=$n SROCE_OUT=$out SROCE_SHARED=/mnt/out/shared
export SROCE_VM_COUNT SROCE_TREE SROCE_KERNEL SROCE_USERLAND
# Keep what is left of the host's budget minus time for logs and power off.
budget=$((SROCE_TIMEOUT - $(cut -d. -f1 /proc/uptime) - 30))
[ "$budget" -gt 0 ] || { echo "guest-init: no time left to run the test"; exit 1; }
eval "set -- $SROCE_CMD"
echo "guest-init: vm$n running $* (timeout ${budget}s)"
cd "$SROCE_TREE"
rc=0
timeout -k 5 "$budget" "$@" < /dev/null &
tpid=$!
# Shortly before the timeout, where every user task waits: a hang then
# shows its place, also a killable sleep that the hung-task detector
# never reports (seen twice in CI: a UD sender under netem on 6.12 that
# outlived its own "timeout 900" and left no trace in the log).
(
	sleep $((budget > 60 ? budget - 20 : budget / 2))
	kill -0 "$tpid" 2>/dev/null || exit 0
	echo "guest-init: the test is still running; its tasks and their stacks:"
	for d in /proc/[0-9]*; do
		cmd=$(tr '\0' ' ' <"$d/cmdline" 2>/dev/null | cut -c1-120) || true
		[ -n "$cmd" ] || continue		# kernel threads, gone
		echo "guest-init: pid ${d#/proc/}" \
			"$(awk '/^State/ { print $2 }' "$d/status" 2>/dev/null) $cmd"
		sed 's/^/guest-init:     /' "$d/stack" 2>/dev/null | head -n 12 || true
	done
) &
wpid=$!
wait "$tpid" || rc=$?
pkill -P "$wpid" 2>/dev/null || true
kill "$wpid" 2>/dev/null || true
[ "$rc" -ne 124 ] || echo "guest-init: test timed out after ${budget}s"
echo "guest-init: vm$n test exited with $rc"
