#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# NVMe over Fabrics (RDMA) between two VMs:
#   nvmeof.sh DRV0 DRV1 [SIZE [CHAOS_ROUNDS]]
# VM0 is the target: nvmet with an RDMA port on its DRV0 device (sroce or
# rxe) and a file namespace on tmpfs. VM1 is the host: nvme-rdma over its
# DRV1 device connects and runs fio with verify=crc32c over SIZE (default
# 256M), random then sequential; then disconnect/reconnect cycles, one of
# them after reloading nvme-rdma, each reading back what was written.
# Everything the kernel's NVMe/RDMA code does goes through sroce's kernel
# verbs: kernel QPs and CQs, fast registration and invalidation.
# With sroce on both sides, after the first fio job each guest injects
# forged requests and NAKs into the other's live NVMe queues while a
# third fio job runs (spoof_phase), and CHAOS_ROUNDS rounds of teardown
# under fio follow the rest, in turn: the target's device deleted, the
# host's, the target's module unloaded, the host's (see chaos_host).
# With netem instead of CHAOS_ROUNDS, both guests' NICs lose, reorder,
# duplicate and corrupt packets (lib.sh netem_on) for the whole run, which
# must still verify every byte; no spoofing then (netem would lose forged
# packets too, and the counts would not add up). Checked besides: each
# sroce side retransmitted, and counted every frame that reached it, each
# corrupted one among them where it was dropped (lib.sh account_check).
set -u
here=$(dirname "$0")
# shellcheck source=tests/guest/lib.sh
. "$here/lib.sh"

DRV0=${1:?usage: nvmeof.sh DRV0 DRV1 [SIZE [CHAOS_ROUNDS|netem]]}
DRV1=${2:?usage: nvmeof.sh DRV0 DRV1 [SIZE [CHAOS_ROUNDS|netem]]}
SIZE=${3:-256M}
CHAOS=${4:-0}
NETEM=0
[ "$CHAOS" != netem ] || { NETEM=1; CHAOS=0; }
CHAOS_ACTS=(target-link host-link target-rmmod host-rmmod)
[ -z "${5:-}" ] || IFS=, read -r -a CHAOS_ACTS <<<"$5"
# The mixed random job moves 16 KiB at a time: at most 32 MiB of it.
RW_SIZE=$(($(numfmt --from=iec "$SIZE") / 1048576))
[ "$RW_SIZE" -le 32 ] || RW_SIZE=32
RW_SIZE=${RW_SIZE}M
DRVS=("$DRV0" "$DRV1")
me=$SROCE_VM_INDEX
T0=$SECONDS
NQN=nqn.2026-11.org.sroce:test
CFG=/sys/kernel/config/nvmet
TARGET=198.18.0.1
FIO_T=900 FIO_N=0
[ "${SROCE_KERNEL:-}" != debug ] || FIO_T=2400

kmemleak_clear

device_up "${DRVS[me]}"
if [ "$NETEM" = 1 ]; then
	[ "${DRVS[me]}" != sroce ] || account_start "198.18.0.$((me + 1))"
	t "netem on eth0: 1% loss, reordering, 1% duplication, 2% corruption" \
		netem_on
fi

target_up() {
	modprobe nvmet-rdma || return 1
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	truncate -s "$SIZE" /dev/shm/nvmeof.img || return 1
	mkdir "$CFG/subsystems/$NQN" || return 1
	echo 1 >"$CFG/subsystems/$NQN/attr_allow_any_host"
	mkdir "$CFG/subsystems/$NQN/namespaces/1"
	echo -n /dev/shm/nvmeof.img >"$CFG/subsystems/$NQN/namespaces/1/device_path"
	# tmpfs has no O_DIRECT.
	echo 1 >"$CFG/subsystems/$NQN/namespaces/1/buffered_io"
	echo 1 >"$CFG/subsystems/$NQN/namespaces/1/enable" || return 1
	mkdir "$CFG/ports/1"
	echo rdma >"$CFG/ports/1/addr_trtype"
	echo ipv4 >"$CFG/ports/1/addr_adrfam"
	echo "$TARGET" >"$CFG/ports/1/addr_traddr"
	echo 4420 >"$CFG/ports/1/addr_trsvcid"
	ln -s "$CFG/subsystems/$NQN" "$CFG/ports/1/subsystems/$NQN" || return 1
	# The port listens through rdma_cm once it is linked.
	wait_for 20 bash -c 'rdma resource show cm_id | grep -q "state LISTEN.*:4420 "'
}

target_down() {
	rm -f "$CFG/ports/1/subsystems/$NQN"
	rmdir "$CFG/ports/1"
	echo 0 >"$CFG/subsystems/$NQN/namespaces/1/enable"
	rmdir "$CFG/subsystems/$NQN/namespaces/1"
	rmdir "$CFG/subsystems/$NQN"
	rm -f /dev/shm/nvmeof.img
	modprobe -r nvmet-rdma nvmet
}

# The namespace's block device once connected (with native multipath the
# subsystem, not the controller, is the block device's parent).
nvme_dev() {
	local b
	for b in /sys/block/nvme*n1; do
		[ "$(cat "$b/device/subsysnqn" 2>/dev/null)" = "$NQN" ] || continue
		[ -b "/dev/${b##*/}" ] && echo "/dev/${b##*/}" && return 0
	done
	return 1
}

# connect [OPTION...]: nvme connect with OPTIONs, then the namespace.
# Through netem the keep-alive timeout is 30 s, not 5: nvmet arms the
# controller's keep-alive timer at the admin queue's connect, while the
# host sends its first keep-alive only once the I/O queues are
# connected, and a lost CM MAD costs ib_cm's retry timeout (about 4 s).
# Seen on 6.1: "nvmet: ctrl 1 keep-alive timer (5 seconds) expired!",
# then the I/O queue's connect refused ("Connect Invalid Data Parameter,
# cntlid: 1") and nvme connect failing with EIO.
KATO=()
[ "$NETEM" = 0 ] || KATO=(--keep-alive-tmo=30)
connect() {
	nvme connect -t rdma -a "$TARGET" -s 4420 -n "$NQN" "${KATO[@]}" "$@" || return 1
	wait_for 30 nvme_dev
}

disconnect() {
	nvme disconnect -n "$NQN" && wait_for 30 bash -c "! grep -qsx $NQN /sys/class/nvme/*/subsysnqn"
}

# [FIO_SIZE=S] fio_run NAME ARGS...: one fio job on the namespace over S
# (default SIZE), verify on.
fio_run() {
	local name=$1 dev log size=${FIO_SIZE:-$SIZE}
	shift
	dev=$(nvme_dev) || { not_ok "fio $name: no namespace"; return; }
	FIO_N=$((FIO_N + 1))
	log=$SROCE_OUT/fio-$FIO_N-$name.log
	if timeout -k 5 "$FIO_T" fio --name="$name" --filename="$dev" \
		--direct=1 --ioengine=libaio --iodepth=16 --size="$size" \
		--verify=crc32c --verify_fatal=1 "$@" >"$log" 2>&1; then
		ok "fio $name $size verify=crc32c on $dev"
	else
		not_ok "fio $name $size verify=crc32c on $dev"
		tail -n 30 "$log" | sed 's/^/#   /'
		# Why the I/O stopped: the NVMe host's and the NIC's view.
		dmesg | tail -n 20 | sed 's/^/#   dmesg: /'
	fi
	grep -E '^ +(READ|WRITE):' "$log" | sed 's/^ */# /'
}

# --- teardown under fio (CHAOS_ROUNDS) ---------------------------------

# The port listens again: relinking the subsystem makes nvmet-rdma open a
# new listener (the old one went with the device).
port_relink() {
	rm -f "$CFG/ports/1/subsystems/$NQN" &&
		ln -s "$CFG/subsystems/$NQN" "$CFG/ports/1/subsystems/$NQN" &&
		wait_for 30 bash -c 'rdma resource show cm_id | grep -q "state LISTEN.*:4420 "'
}

# connect, retrying every second after a loss, giving up after 60 s.
chaos_connect() { connect --reconnect-delay=1 --ctrl-loss-tmo=60; }

# remove ACTION on this side: delete the device or unload the module.
remove_dev() {
	case $1 in
	*-link) timeout 60 rdma link delete sroce0 ;;
	*-rmmod) timeout 60 rmmod sroce ;;
	esac
}

# The target side of round R: remove its device while the host's fio
# runs, put it back and relink the port; or wait while the host does it.
chaos_target() {
	local r=$1 act=$2 name="chaos $1 ($2)"
	barrier "go-$r" 300 || not_ok "$name: host started fio"
	if [[ $act = target-* ]]; then
		echo "nvmeof chaos: round $r $act" >/dev/kmsg
		t "$name: device removed under I/O" remove_dev "$act"
		sleep 2
		t "$name: sroce0 back" setup_rdma sroce
		t "$name: the port listens again" port_relink
	fi
	barrier "done-$r" 600 || not_ok "$name: host finished the round"
	chaos_state "$name"
}

# What sroce0 saw, for a round that went wrong on either side.
chaos_state() {
	echo "# $1: $(rdma statistic show link sroce0/1 2>&1)"
	rdma resource show qp link sroce0/1 2>&1 | sed "s/^/# $1: /"
}

# The host side: fio writes and verifies while the device on either side
# goes away. The target's loss is a path loss: nvme-rdma reconnects once
# the port is back and retries the I/O, so fio must end clean. The host's
# own device going takes the controller with it: fio must end (with
# errors), the controller go, and a new connection work.
chaos_host() {
	local r=$1 act=$2 name="chaos $1 ($2)" dev log pid
	nvme_dev >/dev/null || t "$name: connected" chaos_connect
	dev=$(nvme_dev) || { not_ok "$name: no namespace"; barrier "go-$r" 300; barrier "done-$r" 600; return; }
	log=$SROCE_OUT/fio-chaos-$r.log
	timeout -k 5 "$FIO_T" fio --name="chaos$r" --filename="$dev" \
		--direct=1 --ioengine=libaio --iodepth=16 --size=8M \
		--rw=randwrite --bs=16k --randrepeat=0 --verify=crc32c \
		--verify_fatal=1 >"$log" 2>&1 &
	pid=$!
	sleep 1
	barrier "go-$r" 300 || not_ok "$name: target ready"
	if [[ $act = host-* ]]; then
		echo "nvmeof chaos: round $r $act" >/dev/kmsg
		t "$name: device removed under I/O" remove_dev "$act"
		t "$name: the controller went with the device" \
			wait_for 60 bash -c "! grep -qsx $NQN /sys/class/nvme/*/subsysnqn"
		if wait_for 60 bash -c "! kill -0 $pid"; then
			ok "$name: fio ended"
		else
			not_ok "$name: fio ended"
			kill -9 "$pid"
		fi
		wait "$pid" 2>/dev/null
		t "$name: sroce0 back" setup_rdma sroce
		t "$name: connect again" chaos_connect
		FIO_SIZE=4M fio_run "chaos$r-after" --rw=write --bs=64k
	else
		if wait "$pid"; then
			ok "$name: fio 8M verify=crc32c through the target's loss"
		else
			not_ok "$name: fio 8M verify=crc32c through the target's loss"
			tail -n 20 "$log" | sed 's/^/#   /'
			dmesg | grep -i nvme | tail -n 20 | sed 's/^/#   dmesg: /'
		fi
	fi
	barrier "done-$r" 600 || not_ok "$name: target finished the round"
	chaos_state "$name"
}

# --- forged packets into the live queues ------------------------------

counted() { [ "$(counter "$1")" = "$2" ]; }
# The NVMe queues' QPs on this side (the only kernel RC QPs here: rdma_cm's
# on behalf of nvme-rdma or nvmet-rdma), one "QPN state" per line.
nvme_qps() {
	rdma -j resource show qp link sroce0/1 | "$PY" -c 'import json, sys
for q in json.load(sys.stdin):
    if q.get("type") == "RC" and "pid" not in q:
        print(q["lqpn"], q["state"])' | sort
}

# Both sides, while the host's fio runs: each guest lists its NVMe
# queues' QPs (numbers and PSNs) for the other, which sends each of them
# a SEND, a WRITE and a READ request at the expected PSN and a NAK for
# the last PSN sent, all from a third address, and a SEND from the real
# peer with a foreign P_Key (spoof_live.py). Each side then counts what it
# dropped, to the packet, and finds its queues as they were: the same
# QPs, still in RTS; on the host, no error recovery and fio clean.
spoof_phase() {
	local mine=$RDMA_SYNC/spoof-qps.$me.json theirs=$RDMA_SYNC/spoof-qps.$RDMA_PEER.json
	local np0 pk0 n qps0 qps fpid dev log recov0
	if [ "$me" = 1 ]; then
		dev=$(nvme_dev)
		log=$SROCE_OUT/fio-spoof.log
		timeout -k 5 "$FIO_T" fio --name=spoof --filename="$dev" \
			--direct=1 --ioengine=libaio --iodepth=16 --size="$RW_SIZE" \
			--loops=3 --rw=randwrite --bs=16k --randrepeat=0 \
			--verify=crc32c --verify_fatal=1 >"$log" 2>&1 &
		fpid=$!
		recov0=$(dmesg | grep -cE 'nvme.*(error recovery|Reconnecting|timeout)')
		sleep 1
	fi
	# (the host gets here after its first fio job, the target waits)
	barrier spoof-start $((2 * FIO_T)) || not_ok "spoof: the host connected"
	np0=$(counter rx_drop_not_peer) pk0=$(counter rx_drop_pkey)
	qps0=$(nvme_qps)
	rdma -j resource show qp link sroce0/1 >"$mine"
	barrier spoof-listed 120 || not_ok "spoof: the peer listed its queues"
	echo "nvmeof: forged packets into vm$RDMA_PEER's queues" >/dev/kmsg
	n=$(timeout 120 "$PY" "$here/spoof_live.py" eth0 --src "$MY_V4" \
		--dst "$PEER_V4" --spoof 198.18.0.99 --qps "$theirs" --kernel |
		tee -a "$SROCE_OUT/spoof.log" | tail -n 1)
	t "spoof: forged packets sent into the peer's ${n:-0} NVMe queue(s)" \
		test "${n:-0}" -ge 2
	echo "$n" >"$RDMA_SYNC/spoof-sent.$me"
	barrier spoof-sent 120 || not_ok "spoof: the peer sent its packets"
	n=$(first_line "$RDMA_SYNC/spoof-sent.$RDMA_PEER")
	[[ $n =~ ^[0-9]+$ ]] || n=0
	t "spoof: the $((4 * n)) forged from a third address dropped, counted in rx_drop_not_peer" \
		wait_for 10 counted rx_drop_not_peer $((np0 + 4 * n))
	t "spoof: the $n with a foreign P_Key dropped, counted in rx_drop_pkey" \
		wait_for 10 counted rx_drop_pkey $((pk0 + n))
	echo "# spoof: rx_drop_not_peer $np0 -> $(counter rx_drop_not_peer)," \
		"rx_drop_pkey $pk0 -> $(counter rx_drop_pkey)"
	qps=$(nvme_qps)
	if [ "$qps" = "$qps0" ] && ! echo "$qps" | grep -qv ' RTS$'; then
		ok "spoof: the same NVMe queues, still in RTS"
	else
		not_ok "spoof: the same NVMe queues, still in RTS"
		echo "# before: $qps0" "after: $qps" | tr '\n' ' '
		echo
	fi
	if [ "$me" = 1 ]; then
		if wait "$fpid"; then
			ok "spoof: fio $RW_SIZE verify=crc32c clean through the forged packets"
		else
			not_ok "spoof: fio $RW_SIZE verify=crc32c clean through the forged packets"
			tail -n 20 "$log" | sed 's/^/#   /'
		fi
		t "spoof: no error recovery or reconnect on the host" test \
			"$(dmesg | grep -cE 'nvme.*(error recovery|Reconnecting|timeout)')" = "$recov0"
	fi
	barrier spoof-done 300 || not_ok "spoof: the peer finished"
}

chaos=0
[ "$DRV0" = sroce ] && [ "$DRV1" = sroce ] && chaos=$CHAOS
spoof=0
[ "$DRV0" = sroce ] && [ "$DRV1" = sroce ] && spoof=1
# Not in the debug kernel: there it took 111 s of the check's hour for the
# same packets as on every other kernel, and rx.sh sends such packets
# (third address, foreign P_Key) to a live QP under KASAN.
[ "$SROCE_KERNEL" != debug ] || spoof=0
[ "$NETEM" = 0 ] || spoof=0

if [ "$me" = 0 ]; then
	t "nvmet: RDMA port $TARGET:4420 on ${DRVS[0]} listening" target_up
	barrier target 300 || not_ok "host reached the target barrier"
	[ $spoof = 0 ] || spoof_phase
	# The host works; the target waits (bounded) until it is done.
	barrier host-done $((4 * FIO_T)) || not_ok "host finished in time"
	for ((r = 0; r < chaos; r++)); do
		chaos_target "$r" "${CHAOS_ACTS[r % ${#CHAOS_ACTS[@]}]}"
	done
	t "nvmet: port and subsystem removed, nvmet-rdma unloaded" target_down
else
	barrier target 300 || not_ok "target reached the target barrier"
	t "modprobe nvme-rdma" modprobe nvme-rdma
	t "nvme connect -t rdma to $TARGET (${DRVS[1]}->${DRVS[0]})" connect
	fio_run randwrite --rw=randwrite --bs=64k --randrepeat=0
	[ $spoof = 0 ] || spoof_phase
	fio_run write --rw=write --bs=128k
	t "nvme disconnect" disconnect
	t "nvme connect again" connect
	# The same job as before, verifying only: what the sequential
	# job wrote is still there.
	fio_run write --rw=write --bs=128k --verify_only=1
	t "nvme disconnect again" disconnect
	t "rmmod nvme-rdma" modprobe -r nvme-rdma
	t "modprobe nvme-rdma again" modprobe nvme-rdma
	t "nvme connect after reload" connect
	FIO_SIZE=$RW_SIZE fio_run randrw --rw=randrw --bs=16k
	t "nvme disconnect after reload" disconnect
	barrier host-done 120
	for ((r = 0; r < chaos; r++)); do
		chaos_host "$r" "${CHAOS_ACTS[r % ${#CHAOS_ACTS[@]}]}"
	done
	[ "$chaos" = 0 ] || t "nvme disconnect after the chaos" disconnect
	t "rmmod nvme-rdma nvme-fabrics" modprobe -r nvme-rdma nvme-fabrics
fi

if [ "$NETEM" = 1 ]; then
	t "netem off" netem_off
	# Every corrupted packet that reached sroce counted where it died,
	# once both sides have stopped sending (lib.sh account_check).
	barrier netem-done 300 || not_ok "the peer finished"
	if [ "${DRVS[me]}" = sroce ]; then
		account_check "198.18.0.$((me + 1))"
		echo "# counters: $(rdma statistic show link sroce0/1)"
		t "netem: sroce retransmitted (retransmits $(counter retransmits))" \
			test "$(counter retransmits)" -gt 0
		t "netem's corrupted packets dropped by the ICRC check (rx_icrc_errors $(counter rx_icrc_errors))" \
			test "$(counter rx_icrc_errors)" -gt 0
	fi
fi
teardown_rdma "${DRVS[me]}"
kmemleak_check
echo "# nvmeof.sh ${DRV0} ${DRV1}: vm$me took $((SECONDS - T0)) s"
finish
