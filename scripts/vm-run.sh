#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Boot one or two throwaway QEMU guests on the host's read-only root, run a
# command from the project tree in each (scripts/guest-init.sh), and fail
# unless every guest's command exited 0 and no kernel log shows a splat.
# Modules are only ever loaded inside these guests, never on the host.
set -euo pipefail
usage() {
	cat >&2 <<'EOF'
usage: vm-run.sh --kernel K[,K1] --out DIR [--vms 1|2] [--cpus N]
                 [--mem MB] [--timeout SEC] [--userland host|trixie|sid]
                 -- COMMAND [ARGS...]
  Kernels K: 6.1 is the installed Debian 12 kernel, 6.12 Debian 13's and 7.2
  sid's prebuilt images with their own modules (scripts/kernel.sh), debug
  the KASAN/lockdep/kmemleak kernel (scripts/debug-kernel.sh). Userland:
  the host's bookworm root by default for 6.1 and debug, a trixie root
  for 6.12 and a sid root for 7.2 (scripts/rootfs.sh). With two guests,
  K,K1 boots guest 1 on K1 (cross-version interop).
  In each guest COMMAND runs from the tree with SROCE_VM_INDEX, SROCE_VM_COUNT,
  SROCE_OUT (DIR/vmN), SROCE_SHARED (DIR/shared), SROCE_TREE, SROCE_KERNEL.
  SROCE_KVM=1 uses KVM instead of TCG (KVM guests hang on some hosts).
  SROCE_VM_GRACE=S: the other guests are stopped S s after guest 0 ends.
  SROCE_QEMU_MONITOR=1 gives each guest a QEMU monitor on DIR/vmN/mon.sock
  (e.g. "info virtio-queue-status" when a guest's NIC looks stuck).
EOF
	exit 2
}
here=$(cd "$(dirname "$0")" && pwd)
tree=$(dirname "$here")

opt_kernel='' opt_out='' opt_vms=1 opt_cpus='' opt_mem=1024 opt_timeout=600
opt_userland=''
while [ $# -gt 0 ]; do
	case $1 in
	--kernel | --out | --vms | --cpus | --mem | --timeout | --userland)
		[ $# -ge 2 ] || usage
		printf -v "opt_${1#--}" '%s' "$2"
		shift 2 ;;
	--) shift; break ;;
	*) usage ;;
	esac
done
[ $# -ge 1 ] || usage
[ -n "$opt_out" ] || usage
[[ $opt_vms =~ ^[12]$ ]] || usage
# Two vCPUs for one guest, one each for two; but one for Debian's 6.12
# and 7.2 images: under QEMU 7.2's TCG a vCPU can run code another vCPU has
# just patched (jump labels, through an int3), and those kernels then die
# at boot with "Oops: int3" (2 of about 25 two-vCPU boots of 6.12).
if [ -z "$opt_cpus" ]; then
	opt_cpus=$((3 - opt_vms))
	[[ ,$opt_kernel, != *,6.12,* && ,$opt_kernel, != *,7.2,* ]] || opt_cpus=1
fi
for v in "$opt_cpus" "$opt_mem" "$opt_timeout"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || usage
done

# A relative script path is resolved here; the guest sees the same path.
[ -f "$1" ] && set -- "$(realpath "$1")" "${@:2}"
cmd=$(printf '%q ' "$@")
# The kernel command line has no escape for a double quote.
[[ $cmd != *'"'* ]] || { echo "vm-run: COMMAND may not contain '\"'" >&2; exit 2; }

# guest_kernel K: the boot settings of one guest running kernel K, in
# g_bzimage, g_initrd, g_mods (a module tree the guest mounts on
# /lib/modules, none for the host's installed kernel), g_extra and
# g_userland (its default root).
guest_kernel() {
	local d k
	g_mods='' g_extra='' g_userland=host
	case $1 in
	6.1)
		# The newest Debian kernel installed, never the host's uname -r.
		for k in $(find /lib/modules -mindepth 1 -maxdepth 1 -printf '%f\n' | sort -V); do
			[ -f "/boot/vmlinuz-$k" ] && kver=$k
		done
		g_bzimage=/boot/vmlinuz-${kver:?no kernel in /lib/modules with a /boot/vmlinuz}
		g_initrd=$("$here/initramfs.sh" "$kver")
		;;
	debug)
		d=$("$here/debug-kernel.sh")
		g_bzimage=$d/bzImage
		g_initrd=$("$here/initramfs.sh" "$(cat "$d/release")" "$d/mods")
		g_mods=$d/mods/lib/modules
		g_extra="kmemleak=on"
		;;
	6.12 | 7.2)
		d=$("$here/kernel.sh" "$1")
		g_bzimage=$d/bzImage
		g_initrd=$("$here/initramfs.sh" "$(cat "$d/release")" "$d/mods")
		g_mods=$d/mods/lib/modules
		g_userland=$(cat "$d/suite")
		;;
	*) usage ;;
	esac
	g_userland=${opt_userland:-$g_userland}
	# The host's installed kernel on another root brings the host's tree.
	[ "$1" != 6.1 ] || [ "$g_userland" = host ] || g_mods=/lib/modules
	case $g_userland in
	host) g_root=/ ;;
	trixie | sid)
		g_root=$("$here/rootfs.sh" "$g_userland")
		# Where the guest mounts the tree, on its read-only root.
		mkdir -p "$g_root$tree"
		;;
	*) usage ;;
	esac
}
# --kernel K0,K1 gives each guest its own (cross-version interop).
IFS=, read -r -a kernels <<<"$opt_kernel"
[ ${#kernels[@]} -ge 1 ] || usage

mkdir -p "$opt_out"
out=$(realpath "$opt_out")
rm -rf "$out"/vm[0-9] "$out/shared"	# stale rc or barrier files would lie
mkdir -p "$out/shared"

# The link. Two guests: a Unix stream socket between the two QEMUs
# (-netdev stream, QEMU 7.2 on), which loses no frame. A QEMU whose guest
# has not taken the last frames stops reading; the other's socket fills,
# its QEMU stops taking frames from its guest, and that guest's qdisc
# holds them: flow control, as a RoCE fabric's PFC gives. A pair of UDP
# sockets on loopback dropped frames whenever the receiving QEMU fell
# behind (the host's RcvbufErrors): UD and UC runs then lost messages,
# and RC sent them again (testing.rst, "The link"). One guest: a UDP
# socket to a port nobody listens on, so its eth0 exists but goes nowhere.
free_port() {
	local p
	for _ in $(seq 100); do
		p=$((20000 + RANDOM % 40000))
		[ -z "$(ss -Hnua "sport = :$p")" ] && [ "$p" != "${1:-}" ] &&
			{ echo "$p"; return; }
	done
	echo "vm-run: no free UDP port" >&2
	return 1
}
netdev_opt() {	# netdev_opt GUEST_INDEX
	if [ "$opt_vms" = 1 ]; then
		local p0
		p0=$(free_port)
		echo "socket,id=n0,udp=127.0.0.1:$(free_port "$p0"),localaddr=127.0.0.1:$p0"
		return
	fi
	# Guest 0 listens, guest 1 connects (once the socket is there).
	local server=off
	[ "$1" != 0 ] || server=on
	echo "stream,id=n0,server=$server,addr.type=unix,addr.path=$link_dir/link"
}

# la57=off: with 5-level paging, identify_cpu() briefly clears the LA57
# feature bit; an interrupt in that window makes KASAN see the direct map as
# unshadowed and report a wild-memory-access (debug kernel, seen at boot).
accel=tcg cpu=max,la57=off
[ "${SROCE_KVM:-0}" != 1 ] || accel=kvm cpu=host

pids=()
# shellcheck disable=SC2317 # run by the trap
cleanup() {
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	wait
	[ -z "$link_dir" ] || rm -rf "$link_dir"
}
link_dir=''
trap cleanup EXIT
trap 'exit 130' INT TERM
link_dir=$(mktemp -d /tmp/sroce-link.XXXXXX)

share() {	# share ID PATH TAG [readonly=on]
	echo "-fsdev local,id=$1,path=$2,security_model=none,multidevs=remap${4:+,$4}"
	echo "-device virtio-9p-pci,fsdev=$1,mount_tag=$3"
}
start=$(date +%s)
for ((i = 0; i < opt_vms; i++)); do
	k=${kernels[i]:-${kernels[0]}}
	guest_kernel "$k"
	# no_timer_check: under TCG on a loaded host the IO-APIC timer probe can
	# miss its window and panic the boot ("IO-APIC + timer doesn't work").
	mkdir -p "$out/vm$i"
	# tsc=reliable: TCG's TSC is the host's, the same on every vCPU; but
	# with two possible vCPUs (maxcpus below) and no constant-TSC flag
	# the guest calls it unsynchronized and falls back on the HPET, whose
	# slow reads spoil perftest's clock calibration.
	# norandmaps: TCG keys its translated code by virtual address too, so
	# with address-space randomization every new process translates its
	# shared libraries afresh. A two-guest rc.sh run on 7.2 had
	# translated 279k blocks after 90 s with it, 1.38M without, and took
	# 141 s against 215 (CPU time 198 s against 328).
	append="console=ttyS0 loglevel=5 panic=-1 no_timer_check tsc=reliable norandmaps $g_extra SROCE_INIT=$here/guest-init.sh"
	append+=" SROCE_VM_INDEX=$i SROCE_VM_COUNT=$opt_vms SROCE_KERNEL=$k"
	append+=" SROCE_USERLAND=$g_userland${g_mods:+ SROCE_MODS=1}"
	append+=" SROCE_TREE=$tree SROCE_TIMEOUT=$opt_timeout SROCE_CMD=\"$cmd\""
	# maxcpus of 2 or more even for a one-vCPU guest: QEMU 7.2's TCG drops
	# a lone vCPU's memory barriers (no other vCPU to order against), but
	# virtio's device model runs in another thread. A guest's store to
	# the ring and its load of the event index then pass each other, a
	# notification is lost and the NIC's transmit queue stops for good
	# (NETDEV WATCHDOG). Later QEMU emits them always.
	# q35: on pc the debug kernel spends ~100 s routing ACPI PCI IRQ links.
	# shellcheck disable=SC2046 # share() output is meant to be split
	qemu-system-x86_64 -machine "q35,accel=$accel" -cpu "$cpu" \
		-smp "$opt_cpus,maxcpus=$((opt_cpus > 2 ? opt_cpus : 2))" -m "$opt_mem" \
		-nodefaults -display none -no-reboot \
		-serial "file:$out/vm$i/console.log" \
		-kernel "$g_bzimage" -initrd "$g_initrd" -append "$append" \
		$(share root "$g_root" hostroot readonly=on) \
		$(share tree "$tree" tree readonly=on) \
		${g_mods:+$(share mods "$g_mods" mods readonly=on)} \
		$(share out "$out" out) \
		-netdev "$(netdev_opt "$i")" \
		-device "virtio-net-pci,netdev=n0,mac=52:54:00:12:34:0$i,speed=10000,duplex=full" \
		${SROCE_QEMU_MONITOR:+-monitor unix:$out/vm$i/mon.sock,server=on,wait=off} \
		< /dev/null > "$out/vm$i/qemu.log" 2>&1 &
	pids+=($!)
	# Guest 1's QEMU connects at start and gives up if nobody listens.
	if [ "$i" = 0 ] && [ "$opt_vms" = 2 ]; then
		for _ in $(seq 300); do
			[ -S "$link_dir/link" ] || ! kill -0 "${pids[0]}" 2>/dev/null && break
			sleep 0.1
		done
	fi
done

# Poll rather than wait: each guest's run time is wanted, and a guest that
# hangs must be killed at the deadline; with SROCE_VM_GRACE=S, S seconds
# after guest 0 has ended (bench.sh: a guest wedged in its driver's
# teardown need not hold the round to the deadline).
secs=()
grace=${SROCE_VM_GRACE:-}
[ -z "$grace" ] || [[ $grace =~ ^[1-9][0-9]*$ ]] || usage
stopped="timeout after ${opt_timeout}s"
while :; do
	now=$(date +%s)
	if [ -n "$grace" ] && [ -n "${secs[0]:-}" ] &&
		[ "$now" -ge $((start + secs[0] + grace)) ]; then
		stopped="timeout: stopped ${grace}s after vm0 ended"
		break
	fi
	running=0
	for i in "${!pids[@]}"; do
		[ -z "${secs[i]:-}" ] || continue
		if kill -0 "${pids[i]}" 2>/dev/null; then
			running=1
		else
			secs[i]=$((now - start))
		fi
	done
	[ $running = 1 ] || break
	[ "$now" -lt $((start + opt_timeout)) ] || break
	sleep 1
done
cleanup	# kill what is still running at the deadline

# The tasks guest-init's watchdog found still running in a guest whose test
# timed out, less the shells and tools that only wait for them: the state
# and first kernel frames of each, where a check's log shows them (a hang
# that leaves no other trace, such as a killable sleep, is seen there).
stuck_tasks() {
	tr -d '\r' <"$1" | awk '
		/^guest-init: the test is still running/ { on = 1; next }
		!on { next }
		/^guest-init: pid / {
			cmd = $5; sub(/.*\//, "", cmd)
			show = cmd !~ /^(bash|sh|sleep|tee|timeout|cat|awk|sed|tr|cut|head)$/
			if (show) print "  " substr($0, 13)
			frames = 0
			next
		}
		/^guest-init:     / { if (show && frames++ < 8) print "    " substr($0, 17) }
		' | head -n 60
}

status=0
summary=()
for ((i = 0; i < opt_vms; i++)); do
	dir=$out/vm$i
	took=${secs[i]:+${secs[i]}s}
	took=${took:-$stopped}
	[ -n "${secs[i]:-}" ] || status=1
	rc=$(cat "$dir/rc" 2>/dev/null || echo missing)
	[ "$rc" = 0 ] || status=1
	if [ "$rc" = 124 ] && [ -f "$dir/console.log" ]; then
		echo "vm$i: the test timed out; its tasks then:"
		stuck_tasks "$dir/console.log"
	fi
	# QEMU's own complaints, if it failed to start or died.
	[ ! -s "$dir/qemu.log" ] || tail -n 5 "$dir/qemu.log"
	logs=()
	for f in "$dir/console.log" "$dir/dmesg.log"; do
		[ ! -f "$f" ] || logs+=("$f")
	done
	if [ ${#logs[@]} = 0 ]; then
		verdict="no console log"
		status=1
	elif "$here/check-splat.sh" "${logs[@]}"; then
		verdict=clean
	else
		verdict=SPLAT
		status=1
	fi
	summary+=("vm$i: rc=$rc time=$took $verdict ($dir)")
done
printf '%s\n' "${summary[@]}"
[ $status = 0 ] && echo "vm-run: PASS" || echo "vm-run: FAIL"
exit $status
