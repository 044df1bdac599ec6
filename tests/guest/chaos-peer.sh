#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Teardown under traffic across two guests, so that the side that
# survives is on another host: in each round both guests run one side of
# a tools/sroce-integrity pair (the server in vm0) and one side of a
# perftest pair (the server in vm1), and once data flows one guest, the
# actor (vm0 and vm1 in turn), does one of
#   kill          kill -9 of both of its processes
#   link-delete   rdma link delete of its device
#   rmmod         rmmod sroce
#   vlan-del      ip link del of its VLAN netdev, whose GID the round's
#                 connections use (the device itself stays)
#   mtu addr-del  its MTU cut, or its address removed, for a second
# in turn (or only the ACTIONs named), ROUNDS times in all. Checked every
# round: after kill, link delete or rmmod the survivor's integrity side
# ends by itself, with an error it can be expected to see (the peer's
# disconnect, or a completion error: retry counter exceeded, remote
# access or flushed);
# every process of both guests dies once killed; no integrity side saw a
# mismatched byte; the action returns; both devices come back. Then a
# clean integrity run between the guests, and kmemleak. The guests' logs
# are checked for splats by the host, each round named in them.
#   usage: chaos-peer.sh [ROUNDS [ACTION...]]
set -u
# shellcheck source=tests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

ROUNDS=${1:-10}
ACTIONS=(kill link-delete rmmod vlan-del mtu addr-del)
[ $# -le 1 ] || ACTIONS=("${@:2}")
# VLAN 7 only when an action needs it.
VLAN=0
for a in "${ACTIONS[@]}"; do [ "$a" != vlan-del ] || VLAN=1; done
tool=$SROCE_TREE/tools/sroce-integrity
logs=$SROCE_OUT/chaos-peer
mkdir -p "$logs"
PEER_VLAN_V4=198.18.7.$((RDMA_PEER + 1))
eth0_addr=$(ip -o -4 addr show dev eth0 | awk '{ print $4; exit }')
V4_GID=$(gid_of "$MY_V4")
VLAN_GID=$(gid_of "$MY_VLAN_V4")
# What a survivor may see when its peer goes: the peer's disconnect
# (rdma_cm's DREQ, sent as the peer's ids are destroyed), its own requests
# unanswered until the retry counter runs out (the peer's QP is gone),
# the flushes that follow either, a remote access or remote operation
# error (ib_uverbs destroys a dead process's objects newest first, so the
# MRs the tool registered after its QP go while the QP still answers: a
# READ or WRITE arriving then is NAKed for its rkey, a SEND for the
# receive buffer it cannot be placed in, as an RNIC would), or, on a
# server whose client went quietly, its own receive timeout.
SURVIVOR_ERRORS='disconnected|completion error: (transport retry counter exceeded|Work Request Flushed Error|remote access error|remote operation error)|timeout: nothing from the client'

kmemleak_clear
t "install sroce.ko for modprobe" install_sroce
t "modprobe rdma_ucm" modprobe rdma_ucm
cm_trace_on

# sroce0 on eth0 with both of its addresses (eth0's and VLAN 7's), as
# every round starts.
devices_up() {
	lsmod | grep -qw '^sroce' || modprobe sroce || return 1
	ip link set eth0 mtu 1500 || return 1
	ip addr show dev eth0 | grep -q "inet $eth0_addr" ||
		ip addr add "$eth0_addr" dev eth0 || return 1
	if [ $VLAN = 1 ]; then
		ip link show eth0.7 >/dev/null 2>&1 || vlan_up || return 1
		# (a VLAN follows its device's MTU down, never back up)
		ip link set eth0.7 mtu 1500 || return 1
	fi
	dev_exists sroce0 || rdma link add sroce0 type sroce netdev eth0 || return 1
	wait_for 20 port_active sroce0 &&
		wait_for 20 gid_lookup sroce0 "$V4_GID" &&
		{ [ $VLAN = 0 ] || wait_for 20 gid_lookup sroce0 "$VLAN_GID"; }
}
t "sroce0 on eth0 (and VLAN 7 when needed), port active" devices_up
t "peer reachable" wait_for 30 ping -c1 -W1 "$PEER_V4"
[ $VLAN = 0 ] ||
	t "peer reachable over VLAN 7" wait_for 30 ping -c1 -W1 "$PEER_VLAN_V4"

# A route MTU below the QP's path MTU (here set on the route; after a
# brief MTU cut the stack can hold one learned from its own frag-needed
# for ten minutes) must not drop sroce's full-size packets: like an RNIC,
# sroce sizes them by the path MTU and the device MTU alone. vm0 answers
# RDMA READs with 1024-byte payloads, 1082-byte IP packets.
# (Not in the debug kernel, where it takes a minute and adds nothing.)
if [ "$SROCE_KERNEL" != debug ]; then
	[ "$RDMA_ME" = 1 ] || t "a route to the peer with MTU 1060" \
		ip route add "$PEER_V4/32" dev eth0 mtu 1060
	gi=$(gid_index sroce0 v4)
	pair "ib_read_bw 64K over a route with a smaller MTU" 0 60 \
		ib_read_bw -d sroce0 -x "$gi" -s 65536 -n 20 -p @PORT@ -- \
		ib_read_bw -d sroce0 -x "$gi" -s 65536 -n 20 -p @PORT@ "$PEER_V4"
	[ "$RDMA_ME" = 1 ] || t "the route removed" \
		ip route del "$PEER_V4/32" dev eth0
fi

# What the device and the stack saw, for a round that went wrong.
state() {
	echo "# $1: $(rdma statistic show link sroce0/1 2>&1)"
	rdma resource show qp link sroce0/1 2>&1 | sed "s/^/# $1: /"
	ip neigh show dev eth0 | sed "s/^/# $1: neigh: /"
	[ $VLAN = 0 ] || ip neigh show dev eth0.7 2>&1 | sed "s/^/# $1: neigh: /"
	ping -c1 -W1 "$PEER_V4" >/dev/null 2>&1 || echo "# $1: no ping to $PEER_V4"
	[ $VLAN = 0 ] || ping -c1 -W1 "$PEER_VLAN_V4" >/dev/null 2>&1 ||
		echo "# $1: no ping to $PEER_VLAN_V4"
}

# established LOG PID: the integrity side connected, or died trying.
established() {
	grep -q '^integrity: established' "$1" || ! alive "$2"
}

PERF=(ib_write_bw ib_read_bw ib_send_bw)
# How each survivor ended, by its first error line.
declare -A ENDED=()
round() {
	local n=$1 act=$2 actor=$(($1 % 2)) me=$RDMA_ME role
	local ip=$MY_V4 peer=$PEER_V4 gid=$V4_GID gi perf port before l name
	local integ perfp ok_end=1 why key
	[ "$act" = vlan-del ] && { ip=$MY_VLAN_V4; peer=$PEER_VLAN_V4; gid=$VLAN_GID; }
	[ "$me" = "$actor" ] && role=actor || role=survivor
	name="round $n ($act in vm$actor)"
	echo "chaos-peer: $name, this guest the $role" >/dev/kmsg
	cm_trace_clear
	gi=$(gid_lookup sroce0 "$gid") || { not_ok "$name: GID of $ip"; gi=0; }
	perf=${PERF[n % 3]}
	port=$((18900 + n % 100 * 2))
	l=$logs/$n
	barrier "ready-$n" 60 || not_ok "$name: both guests ready"
	# vm0 serves the integrity pair, vm1 the perftest pair. The
	# integrity pair connects first: perftest busy-polls, and beside it
	# a debug guest's single vCPU can take longer than the tool's
	# connect timeout.
	if [ "$me" = 0 ]; then
		"$tool" -s -b "$ip" -p "$port" --listen-timeout 60 --timeout 30 \
			>"$l.integrity" 2>&1 &
		integ=$!
		wait_for 60 grep -q 'server listening' "$l.integrity"
	fi
	barrier "listening-$n" 60
	if [ "$me" = 1 ]; then
		"$tool" -c "$peer" -p "$port" --bytes 64G --max-size 256K \
			--depth 8 --seed "$n" --timeout 30 >"$l.integrity" 2>&1 &
		integ=$!
	fi
	# Act only once the integrity pair is established and data flows
	# both ways on both guests.
	wait_for 120 established "$l.integrity" "$integ"
	grep -q '^integrity: established' "$l.integrity" || {
		not_ok "$name: the integrity pair connects"
		sed 's/^/#   /' "$l.integrity"
		state "$name"
	}
	barrier "established-$n" 150
	if [ "$me" = 1 ]; then
		"$perf" -d sroce0 -x "$gi" -D 100 -s 65536 -p $((port + 1)) \
			>"$l.perftest" 2>&1 &
		perfp=$!
		wait_for 60 pair_listening $((port + 1)) "$perfp"
	fi
	barrier "perf-listening-$n" 90
	before=$(rx_packets sroce0)
	if [ "$me" = 0 ]; then
		"$perf" -d sroce0 -x "$gi" -D 100 -s 65536 -p $((port + 1)) "$peer" \
			>"$l.perftest" 2>&1 &
		perfp=$!
	fi
	if ! wait_for 60 bash -c "[ \$(cat /sys/class/infiniband/sroce0/ports/1/hw_counters/rx_packets) -gt $((before + 400)) ]" ||
	   ! alive "$integ" || ! alive "$perfp"; then
		why="rx_packets $before -> $(rx_packets sroce0)"
		alive "$integ" || why+=", integrity exited"
		alive "$perfp" || why+=", $perf exited"
		not_ok "$name: traffic flows before the teardown ($why)"
		sed 's/^/#   /' "$l".* | tail -n 20
		state "$name"
		cm_trace_dump "$name"
	fi
	barrier "flowing-$n" 90
	if [ $role = actor ]; then
		sleep "0.$((RANDOM % 10))"
		case $act in
		kill)
			kill -9 "$integ" "$perfp" ;;
		link-delete)
			t "$name: rdma link delete returns" timeout 60 rdma link delete sroce0 ;;
		rmmod)
			t "$name: rmmod sroce returns" timeout 60 rmmod sroce ;;
		vlan-del)
			t "$name: ip link del eth0.7 returns" timeout 60 ip link del eth0.7 ;;
		mtu)
			t "$name: MTU 1060 and back" bash -c \
				'ip link set eth0 mtu 1060 && sleep 1 && ip link set eth0 mtu 1500' ;;
		addr-del)
			t "$name: address removed and put back" bash -c \
				"ip addr del $eth0_addr dev eth0 && sleep 1 && ip addr add $eth0_addr dev eth0" ;;
		*)
			not_ok "$name: no such action" ;;
		esac
	fi
	case $act in
	kill|link-delete|rmmod) ;;
	*) ok_end=0 ;;
	esac
	# The survivor's integrity side notices that its peer went, by
	# itself; the actor's ends with its device, or was killed.
	if [ $ok_end = 1 ]; then
		if gone 90 "$integ"; then
			why=$(grep -m1 '^ERROR' "$l.integrity")
			if [ $role = survivor ]; then
				# (tallied without the message counts)
				key=$(sed -E 's/\b[0-9][0-9a-fx]*/N/g' <<<"${why:-no error}")
				ENDED[$key]=$((${ENDED[$key]:-0} + 1))
				if echo "$why" | grep -qE "$SURVIVOR_ERRORS"; then
					ok "$name: the survivor's integrity side ends: ${why#ERROR: }"
				else
					not_ok "$name: the survivor's integrity side ends with an expected error (${why:-none})"
					sed 's/^/#   /' "$l.integrity" | tail -n 10
				fi
			fi
		else
			not_ok "$name: the $role's integrity side ends by itself"
			stuck "$integ"
		fi
	else
		sleep 1
	fi
	barrier "acted-$n" 120
	kill -9 "$integ" "$perfp" 2>/dev/null
	if gone 30 "$integ" "$perfp"; then
		ok "$name: the $role's processes ended"
	else
		not_ok "$name: the $role's processes ended"
		stuck "$integ" "$perfp"
	fi
	wait "$integ" "$perfp" 2>/dev/null
	if grep -q 'mismatches=[1-9]\|MISMATCH' "$l.integrity"; then
		not_ok "$name: the $role's integrity side saw no mismatched byte"
		grep -h -E '^(integrity|ERROR|MISMATCH)' "$l.integrity" | sed 's/^/#   /'
	else
		ok "$name: the $role's integrity side saw no mismatched byte"
	fi
	t "$name: the $role's device back" devices_up
}

run_rounds chaos-peer "$ROUNDS" "$logs/jobs.log" "${ACTIONS[@]}"
cm_trace_off
for why in "${!ENDED[@]}"; do
	echo "# survivor ended ${ENDED[$why]} time(s): $why"
done

# The devices still do their job after all that.
barrier final 120 || not_ok "both guests ready for the last run"
if [ "$RDMA_ME" = 0 ]; then
	"$tool" -s -b "$MY_V4" -p 18777 --listen-timeout 120 --timeout 60 \
		>"$logs/final" 2>&1 &
	srv=$!
	sleep 0.5
	barrier final-listening 120
	# (wait in this shell: t's subshell cannot wait for a running child)
	wait "$srv"
	rc=$?
	t "integrity after the chaos (server): clean" test $rc = 0
	grep -E '^(integrity|ERROR)' "$logs/final" | sed 's/^/# /'
else
	barrier final-listening 120
	t "integrity after the chaos (client): 4M clean" timeout 300 \
		"$tool" -c "$PEER_V4" -p 18777 --bytes 4M --seed 3 --timeout 60
fi
barrier finished 300
t "rdma link delete sroce0" rdma link delete sroce0
t "rmmod sroce" rmmod sroce
ip link del eth0.7 2>/dev/null
kmemleak_check
finish
