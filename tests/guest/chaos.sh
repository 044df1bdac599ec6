#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Teardown under traffic, in one guest (same-host loopback, so either side
# of a connection is here): while tools/sroce-integrity and a perftest
# pair move data between two processes on one sroce device, one of
#   kill-client kill-server   kill -9 of one side of both pairs
#   link-delete rmmod         rdma link delete / rmmod sroce
#   netdev-del                ip link del of the device's netdev
#   mtu addr-del route-del    MTU cut, address or local route removed,
#                             then put back
# happens, in turn (or only the ACTIONs named), ROUNDS times in all. Then tests/pyverbs/teardown.py
# (MRs, windows and QPs torn down under their own traffic, VROUNDS rounds
# of each kind), a clean integrity run to show the device still works,
# and kmemleak. Checked every round: every process ends (by itself where
# it can notice: the integrity tool handles rdma_cm's events; perftest is
# then killed, and must die), no integrity side saw a mismatched byte,
# device removal and rmmod return, the device comes back. The guest's log
# is checked for splats by the host, each round named in it.
#   usage: chaos.sh [ROUNDS [VROUNDS [ACTION...]]]
set -u
# shellcheck source=tests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

ROUNDS=${1:-16}
VROUNDS=${2:-4}
ACTIONS=(kill-client kill-server link-delete rmmod netdev-del mtu addr-del
	route-del)
[ $# -le 2 ] || ACTIONS=("${@:3}")
tool=$SROCE_TREE/tools/sroce-integrity
logs=$SROCE_OUT/chaos
mkdir -p "$logs"
D0_V4=198.19.0.1
# eth0's address as guest-init.sh set it (prefix included), to put back.
eth0_addr=$(ip -o -4 addr show dev eth0 | awk '{ print $4; exit }')

# mismatched LOG...: the names of the integrity sides whose logs report a
# wrong byte, in the summary line (a side that ends normally) or in any
# MISMATCH line (printed as it is seen, also by a side killed before its
# summary).
mismatched() {
	local f
	for f in "$@"; do
		grep -q -e 'mismatches=[1-9]' -e '^MISMATCH' "$f" && echo -n " ${f##*.}"
	done
}

kmemleak_clear
modprobe dummy numdummies=0 2>/dev/null
t "install sroce.ko for modprobe" install_sroce
t "modprobe rdma_ucm" modprobe rdma_ucm
cm_trace_on

# The RoCE v2 GIDs of both devices' addresses (lib.sh's gid_lookup
# finds their indexes).
V4_GID=$(gid_of "$MY_V4")
D0_GID=$(gid_of "$D0_V4")

# Both devices, as every round starts: sroce0 on eth0, sroce1 on dummy d0.
devices_up() {
	lsmod | grep -qw '^sroce' || modprobe sroce || return 1
	ip addr show dev eth0 | grep -q "inet $eth0_addr" ||
		ip addr add "$eth0_addr" dev eth0 || return 1
	ip route show table local | grep -q "^local $MY_V4 " ||
		ip route add local "$MY_V4" dev eth0 proto kernel scope host \
			src "$MY_V4" table local || return 1
	ip link set eth0 mtu 1500 || return 1
	if ! ip link show d0 >/dev/null 2>&1; then
		ip link add d0 type dummy && ip link set d0 up &&
			ip addr add "$D0_V4/16" dev d0 || return 1
	fi
	dev_exists sroce0 || rdma link add sroce0 type sroce netdev eth0 || return 1
	dev_exists sroce1 || rdma link add sroce1 type sroce netdev d0 || return 1
	wait_for 20 port_active sroce0 && wait_for 20 port_active sroce1 &&
		wait_for 20 gid_lookup sroce0 "$V4_GID" &&
		wait_for 20 gid_lookup sroce1 "$D0_GID"
}
t "sroce0 on eth0, sroce1 on dummy d0, ports active" devices_up

PERF=(ib_write_bw ib_read_bw ib_send_bw)
round() {
	local n=$1 act=$2 dev=sroce0 ip=$MY_V4 gid=$V4_GID gi perf port pids=() before
	local i_srv i_cli p_srv p_cli name ok_end=1 l
	[ "$act" = netdev-del ] && { dev=sroce1; ip=$D0_V4; gid=$D0_GID; }
	name="round $n ($act on $dev)"
	echo "chaos: $name" >/dev/kmsg
	cm_trace_clear
	gi=$(gid_lookup "$dev" "$gid") || { not_ok "$name: GID of $ip on $dev"; return; }
	perf=${PERF[n % 3]}
	port=$((18800 + n % 100 * 2))
	l=$logs/$n
	before=$(rx_packets "$dev")
	"$tool" -s -b "$ip" -p "$port" --listen-timeout 30 --timeout 20 \
		>"$l.isrv" 2>&1 &
	i_srv=$!
	"$perf" -d "$dev" -x "$gi" -D 100 -s 65536 -p $((port + 1)) \
		>"$l.psrv" 2>&1 &
	p_srv=$!
	# The clients start once their servers listen (a client that came
	# first was refused, and the round then found no traffic).
	pair_wait_listening "$port" "$i_srv"
	pair_wait_listening $((port + 1)) "$p_srv"
	"$tool" -c "$ip" -p "$port" --bytes 64G --max-size 256K --depth 8 \
		--seed "$n" --timeout 20 >"$l.icli" 2>&1 &
	i_cli=$!
	"$perf" -d "$dev" -x "$gi" -D 100 -s 65536 -p $((port + 1)) "$ip" \
		>"$l.pcli" 2>&1 &
	p_cli=$!
	pids=("$i_srv" "$p_srv" "$i_cli" "$p_cli")
	# Act only once both pairs move data: 400 packets in, and both clients
	# still up.
	if ! wait_for 60 bash -c "[ \$(cat /sys/class/infiniband/$dev/ports/1/hw_counters/rx_packets) -gt $((before + 400)) ]" ||
	   ! alive "$i_cli" || ! alive "$p_cli"; then
		not_ok "$name: traffic flows before the teardown"
		sed 's/^/#   /' "$l".* | tail -n 20
		cm_trace_dump "$name"
	fi
	sleep "0.$((RANDOM % 10))"
	case $act in
	kill-client)
		kill -9 "$i_cli" "$p_cli" ;;
	kill-server)
		kill -9 "$i_srv" "$p_srv" ;;
	link-delete)
		t "$name: rdma link delete returns" timeout 60 rdma link delete "$dev" ;;
	rmmod)
		t "$name: rmmod sroce returns" timeout 60 rmmod sroce ;;
	netdev-del)
		t "$name: ip link del d0 returns" timeout 60 ip link del d0 ;;
	mtu)
		t "$name: MTU 1060 and back" bash -c \
			'ip link set eth0 mtu 1060 && sleep 1 && ip link set eth0 mtu 1500'
		ok_end=0 ;;
	addr-del)
		t "$name: address removed and put back" bash -c \
			"ip addr del $eth0_addr dev eth0 && sleep 1 && ip addr add $eth0_addr dev eth0"
		ok_end=0 ;;
	route-del)
		t "$name: local route removed and put back" bash -c \
			"ip route del local $MY_V4 dev eth0 table local && sleep 1 &&
			 ip route add local $MY_V4 dev eth0 proto kernel scope host src $MY_V4 table local"
		ok_end=0 ;;
	*)
		not_ok "$name: no such action"
		ok_end=0 ;;
	esac
	# The integrity tool notices a dead peer or a removed device and ends
	# by itself; after a reversible change it may go on, and is stopped.
	if [ $ok_end = 1 ]; then
		gone 60 "$i_srv" "$i_cli" ||
			{ not_ok "$name: the integrity sides end by themselves"; stuck "$i_srv" "$i_cli"; }
	else
		sleep 1
	fi
	kill -9 "${pids[@]}" 2>/dev/null
	if gone 30 "${pids[@]}"; then
		ok "$name: every process ended"
	else
		not_ok "$name: every process ended"
		stuck "${pids[@]}"
	fi
	wait "${pids[@]}" 2>/dev/null
	local bad
	bad=$(mismatched "$l.isrv" "$l.icli")
	if [ -z "$bad" ]; then
		ok "$name: no integrity side saw a mismatched byte"
	else
		not_ok "$name: no integrity side saw a mismatched byte:$bad"
		grep -h -E '^(integrity|ERROR)' "$l.isrv" "$l.icli" | sed 's/^/#   /'
	fi
	grep -h '^integrity' "$l.isrv" "$l.icli" | sed "s/^/# $act: /"
	t "$name: devices back" devices_up
}

# The check of every round must catch what it claims, also of a side that
# is killed, as in a round, before it prints its summary: a pair whose
# client flips one byte it checks (--inject-mismatch), killed mid-run.
"$tool" -s -b "$MY_V4" -p 18775 --listen-timeout 30 --timeout 20 \
	>"$logs/inject.isrv" 2>&1 &
srv=$!
pair_wait_listening 18775 "$srv"
"$tool" -c "$MY_V4" -p 18775 --bytes 64G --seed 5 --timeout 20 \
	--inject-mismatch >"$logs/inject.icli" 2>&1 &
cli=$!
wait_for 30 grep -q '^inject:' "$logs/inject.icli"
sleep 1
kill -9 "$srv" "$cli" 2>/dev/null
wait "$srv" "$cli" 2>/dev/null
t "a killed pair with a flipped byte (--inject-mismatch) is caught" \
	test -n "$(mismatched "$logs/inject.isrv" "$logs/inject.icli")"

run_rounds chaos "$ROUNDS" "$logs/jobs.log" "${ACTIONS[@]}"
cm_trace_off

T0=$SECONDS
timeout -k 5 600 "$PY" "$SROCE_TREE/tests/pyverbs/teardown.py" sroce0 \
	--ip "$MY_V4" --rounds "$VROUNDS"
rc=$?
if [ $rc -ne 0 ]; then
	T_FAILED=$((T_FAILED + 1))
	[ $rc -ge 124 ] && echo "# teardown.py: killed or crashed (exit $rc)"
fi
echo "# teardown.py: $((SECONDS - T0)) s"

# The device still does its job after all that.
"$tool" -s -b "$MY_V4" -p 18777 --listen-timeout 60 --timeout 60 \
	>"$logs/final.isrv" 2>&1 &
srv=$!
pair_wait_listening 18777 "$srv"
t "integrity after the chaos: 4M clean" timeout 300 "$tool" -c "$MY_V4" \
	-p 18777 --bytes 4M --seed 3 --timeout 60
# (wait in this shell: t's subshell cannot wait for a child still running)
wait "$srv"
rc=$?
t "integrity server after the chaos: clean" test $rc = 0

t "rdma link delete sroce1, ip link del d0" bash -c \
	'rdma link delete sroce1 && ip link del d0'
t "rdma link delete sroce0" rdma link delete sroce0
t "rmmod sroce" rmmod sroce
kmemleak_check
finish
