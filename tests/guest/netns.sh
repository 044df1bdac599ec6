#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# sroce in network namespaces, in one guest: "netns.sh [suite|quick]".
#
# ib_core in exclusive mode; namespaces ns1 and ns2 joined by a veth pair
# (va in ns1, vb in ns2), a sroce device on each end (sroce1, sroce2), and
# sroce0 on eth0 in the initial namespace. Checks:
#   - each device is born in (6.1: moved to) its netdev's namespace, seen
#     only there, and each namespace binds its own UDP port 4791;
#   - perftest (GID addressing and rdma_cm), rping over IPv4 and IPv6 and
#     ibv_rc_pingpong between the namespaces; with "suite", rdma-core's own
#     tests on sroce1 inside ns1; "quick" moves a tenth of the bytes (the
#     debug kernel);
#   - isolation: from ns2, sroce1 cannot be shown, opened or deleted; ns1
#     reaches nothing of the initial namespace, whose device sees none of
#     the traffic;
#   - rdma dev set moves a device out of its namespace under traffic (its
#     user is disassociated) and back, and it works again;
#   - rmmod with devices in three namespaces; a physical netdev (eth0)
#     carrying a device in a namespace that is deleted comes back to the
#     initial namespace without its device; deleting ns1 takes both veth
#     ends and both devices, and closes ns2's port.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/guest/lib.sh
. "$here/lib.sh"

MODE=${1:-}
# perftest iterations: WRITE and SEND 200, READ 100 (a tenth when quick).
NW=200 NR=100
[ "$MODE" != quick ] || { NW=20; NR=10; }
V4_1=198.19.1.1 V4_2=198.19.1.2
V6_1=2001:2:1::1 V6_2=2001:2:1::2
LOGS=$SROCE_OUT/logs
mkdir -p "$LOGS"

n1() { ip netns exec ns1 "$@"; }
n2() { ip netns exec ns2 "$@"; }
n3() { ip netns exec ns3 "$@"; }

# Devices seen from namespace NS ("init" for the initial one), one line.
devs_in() {
	local -a pre=()
	[ "$1" = init ] || pre=(ip netns exec "$1")
	"${pre[@]}" rdma dev show | awk '{ sub(":", "", $2); print $2 }' |
		sort | tr '\n' ' ' | sed 's/ $//'
}
# Sockets bound to UDP 4791 in namespace NS: IPv4 and IPv6, "N4 N6".
port_socks() {
	local -a pre=()
	[ "$1" = init ] || pre=(ip netns exec "$1")
	echo "$("${pre[@]}" grep -c ' [0-9A-F]*:12B7 ' /proc/net/udp)" \
		"$("${pre[@]}" grep -c ' [0-9A-F]*:12B7 ' /proc/net/udp6)"
}
active_in() {
	ip netns exec "$1" cat "/sys/class/infiniband/$2/ports/1/state" 2>/dev/null |
		grep -q ACTIVE
}
# The RoCE v2 GID index of ADDR on DEV, seen from NS.
gid_in() {
	local want
	want=$(gid_of "$3")
	ip netns exec "$1" bash -c "$(declare -f gid_lookup); for i in \$(seq 100); do gid_lookup $2 $want && exit 0; sleep 0.2; done; exit 1"
}

# Whether this kernel's ib_core makes a device in a given namespace
# (ib_alloc_device_with_net: 7.2, not Debian's 6.1 and 6.12), as the
# build found it: there sroce must make it in its netdev's; elsewhere every
# device is born in the initial one.
born_in_ns=false
if grep -q SROCE_HAVE_ALLOC_DEVICE_WITH_NET "$SROCE_BUILD/drivers/sroce/.main.o.cmd"; then
	born_in_ns=true
fi

# link_add NS DEV NETDEV: rdma link add inside NS; where ib_core cannot
# make it there, move it there from the initial namespace.
link_add() {
	ip netns exec "$1" rdma link add "$2" type sroce netdev "$3" || return 1
	if [ $born_in_ns = false ]; then
		rdma dev set "$2" netns "$1" || return 1
	fi
	wait_for 20 active_in "$1" "$2"
}

# ns_pair NAME SNS PORT SERVER... -- CLIENT...: a server in namespace SNS
# (listening on TCP or rdma_cm PORT), then the client in the other one;
# both must exit 0. Output in $LOGS.
NS_SEQ=0
ns_pair() {
	local name=$1 sns=$2 port=$3 cns=ns1 log pid rc crc
	local -a scmd=() ccmd=()
	shift 3
	[ "$sns" = ns2 ] || cns=ns2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do scmd+=("$1"); shift; done
	shift
	ccmd=("$@")
	NS_SEQ=$((NS_SEQ + 1))
	log=$LOGS/netns-$(printf '%02d' $NS_SEQ)-$(echo "$name" | tr -c 'a-zA-Z0-9.=\n-' '_').log
	echo "# server in $sns: ${scmd[*]}" >"$log"
	ip netns exec "$sns" timeout -k 3 120 "${scmd[@]}" >>"$log" 2>&1 &
	pid=$!
	if ! wait_for 30 ip netns exec "$sns" bash -c \
		"[ -n \"\$(ss -Hltn 'sport = :$port')\" ] || rdma resource show cm_id | grep -q 'state LISTEN.*src-addr .*:$port '"; then
		echo "# not listening on $port after 30 s" >>"$log"
	fi
	echo "# client in $cns: ${ccmd[*]}" >>"$log"
	ip netns exec "$cns" timeout -k 3 90 "${ccmd[@]}" >>"$log" 2>&1
	crc=$?
	wait "$pid"
	rc=$?
	echo "# client exit $crc, server exit $rc" >>"$log"
	if [ $crc = 0 ] && [ $rc = 0 ]; then
		ok "$name"
	else
		not_ok "$name"
		tail -n 20 "$log" | sed 's/^/#   /'
	fi
}

kmemleak_clear
t "install sroce.ko for modprobe" install_sroce
t "modprobe sroce" modprobe sroce
# Only while no namespace but the initial one exists.
t "rdma system set netns exclusive" rdma system set netns exclusive
t "ib_core in exclusive mode" bash -c "rdma system show | grep -q 'netns exclusive'"
t "rdma link add sroce0 on eth0 in the initial namespace" \
	rdma link add sroce0 type sroce netdev eth0
t "sroce0 active" wait_for 20 port_active sroce0

# `rdma dev set DEV netns root` names the initial namespace.
t "the initial namespace named root" ip netns attach root 1
veth_up() {
	ip netns add ns1 && ip netns add ns2 &&
		ip link add va type veth peer name vb &&
		ip link set va netns ns1 && ip link set vb netns ns2 &&
		n1 ip link set lo up && n2 ip link set lo up &&
		n1 ip addr add $V4_1/24 dev va && n2 ip addr add $V4_2/24 dev vb &&
		n1 ip addr add $V6_1/64 dev va nodad &&
		n2 ip addr add $V6_2/64 dev vb nodad &&
		n1 ip link set va up && n2 ip link set vb up
}
t "ns1 and ns2 joined by a veth pair" veth_up
t "ns1 reaches ns2 over IPv4 and IPv6" bash -c \
	"ip netns exec ns1 ping -c1 -W5 $V4_2 && ip netns exec ns1 ping -c1 -W5 $V6_2"

c0=$(counter rx_packets sroce0)
if $born_in_ns; then
	echo "# this kernel makes a device in the namespace of the rdma link add"
else
	echo "# this kernel makes every device in the initial namespace: rdma dev set moves it"
fi
t "rdma link add sroce1 on va in ns1" link_add ns1 sroce1 va
t "rdma link add sroce2 on vb in ns2" link_add ns2 sroce2 vb

# Placement.
# is WHAT GOT WANT: a check that says what it got.
is() {
	if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1"; echo "#   got '$2', want '$3'"; fi
}
is "ns1 sees sroce1 only" "$(devs_in ns1)" sroce1
is "ns2 sees sroce2 only" "$(devs_in ns2)" sroce2
is "the initial namespace sees sroce0 only" "$(devs_in init)" sroce0
t "ibv_devices in ns1 lists sroce1 only" bash -c \
	"[ \"\$(ip netns exec ns1 ibv_devices | awk 'NR > 2 { print \$1 }')\" = sroce1 ]"
t "sysfs in ns1 lists sroce1 only" test "$(n1 ls /sys/class/infiniband)" = sroce1
t "sroce1's parent is va" bash -c \
	"ip netns exec ns1 rdma link show sroce1/1 | grep -qw 'netdev va'"
for ns in init ns1 ns2; do
	t "UDP port 4791 bound once for IPv4 and IPv6 in ${ns/init/the initial namespace}" \
		test "$(port_socks $ns)" = "1 1"
done

# Traffic between the namespaces.
G1=$(gid_in ns1 sroce1 $V4_1) G2=$(gid_in ns2 sroce2 $V4_2)
G61=$(gid_in ns1 sroce1 $V6_1) G62=$(gid_in ns2 sroce2 $V6_2)
t "sroce1 and sroce2 have their addresses' GIDs" \
	test -n "$G1" -a -n "$G2" -a -n "$G61" -a -n "$G62"
# rx_bytes of sroce1 and sroce2 together.
rx12() {
	echo $(($(n1 cat /sys/class/infiniband/sroce1/ports/1/hw_counters/rx_bytes) +
		$(n2 cat /sys/class/infiniband/sroce2/ports/1/hw_counters/rx_bytes)))
}
rx0=$(rx12)
ns_pair "ib_write_bw 64 KiB, GID addressing, ns1 -> ns2" ns2 18515 \
	ib_write_bw -d sroce2 -x "$G2" -s 65536 -n $NW -F -p 18515 -- \
	ib_write_bw -d sroce1 -x "$G1" -s 65536 -n $NW -F -p 18515 $V4_2
ns_pair "ib_read_bw 64 KiB over rdma_cm, ns2 -> ns1" ns1 18516 \
	ib_read_bw -d sroce1 -R -s 65536 -n $NR -F -p 18516 -- \
	ib_read_bw -d sroce2 -R -s 65536 -n $NR -F -p 18516 $V4_1
ns_pair "ib_send_bw 4 KiB, IPv6 GIDs, ns1 -> ns2" ns2 18517 \
	ib_send_bw -d sroce2 -x "$G62" -s 4096 -n $NW -F -p 18517 -- \
	ib_send_bw -d sroce1 -x "$G61" -s 4096 -n $NW -F -p 18517 $V4_2
ns_pair "rping -C 20 -S 4096 -V over IPv4, ns1 -> ns2" ns2 7174 \
	"$RPING" -s -a $V4_2 -p 7174 -C 20 -S 4096 -- \
	"$RPING" -c -a $V4_2 -p 7174 -C 20 -S 4096 -V
ns_pair "rping -C 20 -V over IPv6, ns2 -> ns1" ns1 7175 \
	"$RPING" -s -a $V6_1 -p 7175 -C 20 -- \
	"$RPING" -c -a $V6_1 -p 7175 -C 20 -V
ns_pair "ibv_rc_pingpong -c, ns1 -> ns2" ns2 18518 \
	ibv_rc_pingpong -d sroce2 -g "$G2" -c -n 50 -s 8192 -p 18518 -- \
	ibv_rc_pingpong -d sroce1 -g "$G1" -c -n 50 -s 8192 -p 18518 $V4_2
# WRITE NW x 64 KiB, READ NR x 64 KiB, SEND NW x 4 KiB: 20.5 MB (quick 2.05).
rx0=$(($(rx12) - rx0))
want=$(((NW * 65536 + NR * 65536 + NW * 4096) * 99 / 100))
t "sroce1 and sroce2 received the traffic ($rx0 bytes, >= $want)" test "$rx0" -ge "$want"
t "sroce0 in the initial namespace saw none of it" test "$(counter rx_packets sroce0)" = "$c0"

if [ "$MODE" = suite ]; then
	# rdma-core's own tests on sroce1, from inside ns1 (its rdma_cm tests
	# take ns1's addresses; same-device traffic takes sroce's local path).
	out=$(ip netns exec ns1 bash -c ". '$here/lib.sh'; rdma_core_suite sroce1")
	echo "$out"
	grep -q '^not ok' <<<"$out" && T_FAILED=$((T_FAILED + 1))
fi

# Isolation.
uv1=$(n1 bash -c 'grep -lx sroce1 /sys/class/infiniband_verbs/*/ibdev' | cut -d/ -f5)
t "sroce1's uverbs device found in ns1 ($uv1)" test -n "$uv1"
t "ns2 cannot open sroce1's /dev/infiniband/$uv1 (EPERM)" n2 "$PY" -c "
import os, sys
try:
    os.close(os.open('/dev/infiniband/$uv1', os.O_RDWR))
except PermissionError:
    sys.exit(0)
sys.exit(1)"
t_fails "ns2 cannot see sroce1 (rdma dev show)" n2 rdma dev show sroce1
t_fails "ns2 cannot use sroce1 (ibv_devinfo -d)" n2 ibv_devinfo -d sroce1
t_fails "ns2 cannot delete sroce1" n2 rdma link delete sroce1
t_fails "ns2 cannot move sroce1" n2 rdma dev set sroce1 netns ns2
t "sroce1 still in ns1 and active" active_in ns1 sroce1
t_fails "ns1 cannot reach the initial namespace's 198.18.0.1 over rdma_cm" \
	n1 timeout 30 rping -c -a 198.18.0.1 -p 7176 -C 1
t "sroce0 received nothing from ns1" test "$(counter rx_packets sroce0)" = "$c0"

# rdma dev set: out of ns1 under traffic, then back. ib_core
# disassociates the device's user contexts: it destroys their objects,
# closes their completion channels and ends each async fd's events with
# IB_EVENT_DEVICE_FATAL. A process learns of it from those fds or at its
# next verb that enters the kernel (the rxe doorbell is a write());
# reading a CQ ring does not, so a polling client whose send queue was
# full at the move would spin on its CQ until its -D ran out, then exit
# 0. The client therefore sleeps on its completion channel (ib_send_bw
# -e; ib_write_bw has no -e, and -D none with it), and ibv_asyncwatch
# waits on the async fd, which is what a polling application has.
#
# The three run under ip netns exec itself, not n1 or n2: $! is then the
# process (ip execs timeout) and kill ends it, where it would end only a
# subshell and leave a process holding its namespace (and the devices
# in it) alive.
log=$LOGS/netns-move.log
ip netns exec ns2 timeout -k 3 300 ib_send_bw -d sroce2 -x "$G2" -s 65536 -n 1000000 -F -p 18520 >"$log.server" 2>&1 &
spid=$!
wait_for 30 n2 bash -c "[ -n \"\$(ss -Hltn 'sport = :18520')\" ]"
ip netns exec ns1 timeout -k 3 600 ibv_asyncwatch -d sroce1 >"$log.async" 2>&1 &
apid=$!
ip netns exec ns1 timeout -k 3 300 ib_send_bw -d sroce1 -x "$G1" -s 65536 -n 1000000 -F -e -p 18520 $V4_2 >"$log" 2>&1 &
cpid=$!
tx1() { n1 cat /sys/class/infiniband/sroce1/ports/1/hw_counters/tx_packets; }
tx=$(tx1)
t "ib_send_bw running on sroce1" wait_for 60 bash -c "[ \$($(declare -f n1 tx1); tx1) -gt $((tx + 500)) ]"
moved=$SECONDS
t "rdma dev set sroce1 netns root, under traffic" n1 rdma dev set sroce1 netns root
gone 60 "$cpid"
took=$((SECONDS - moved))
kill "$spid" 2>/dev/null
wait "$cpid" 2>/dev/null
crc=$?
wait "$spid" 2>/dev/null
# Its million messages would take hours (timeout's 124 at 300 s): the
# move must end it at once, with an error.
t "the client on sroce1 ended (disassociated): exit $crc, $took s after the move" \
	test "$crc" -ne 0 -a "$crc" -ne 124 -a "$took" -lt 30
t "ibv_asyncwatch on sroce1 got IBV_EVENT_DEVICE_FATAL" \
	wait_for 30 grep -q DEVICE_FATAL "$log.async"
kill "$apid" 2>/dev/null
wait "$apid" 2>/dev/null
t "sroce1 now in the initial namespace, not in ns1" bash -c \
	"[ \"$(devs_in init)\" = 'sroce0 sroce1' ] && [ -z \"\$(ip netns exec ns1 rdma dev show)\" ]"
t "rdma dev set sroce1 netns ns1: back" rdma dev set sroce1 netns ns1
t "sroce1 active in ns1 again" wait_for 20 active_in ns1 sroce1
ns_pair "rping -C 10 -V after the moves, ns1 -> ns2" ns2 7177 \
	"$RPING" -s -a $V4_2 -p 7177 -C 10 -- \
	"$RPING" -c -a $V4_2 -p 7177 -C 10 -V

# Unload with devices in three namespaces.
t "rmmod sroce with sroce0, sroce1 and sroce2 in three namespaces" rmmod sroce
t "no device left in any namespace" bash -c \
	"[ -z \"\$(rdma dev show; ip netns exec ns1 rdma dev show; ip netns exec ns2 rdma dev show)\" ]"
t "no socket left on UDP 4791 in ns1 and ns2" \
	test "$(port_socks ns1) $(port_socks ns2)" = "0 0 0 0"

# A physical netdev in a namespace that goes: back in the initial one,
# without its device (sroce waits for the device before the namespace's
# sockets close).
t "modprobe sroce again" modprobe sroce
t "eth0 moved into ns3" bash -c "ip netns add ns3 && ip link set eth0 netns ns3 && ip netns exec ns3 ip link set eth0 up"
t "rdma link add sroce3 on eth0 in ns3" link_add ns3 sroce3 eth0
t "ns3 deleted" ip netns del ns3
t "eth0 back in the initial namespace" wait_for 60 ip link show eth0
t "sroce3 gone with ns3" wait_for 30 bash -c "[ -z \"\$(rdma dev show)\" ]"
ip link set eth0 up
ip addr add 198.18.0.$((SROCE_VM_INDEX + 1))/24 dev eth0 2>/dev/null
ip addr add 2001:2::$((SROCE_VM_INDEX + 1))/64 dev eth0 nodad 2>/dev/null

# Deleting ns1 deletes the veth pair: both devices go, ns2's port closes.
t "rdma link add sroce1 on va in ns1 again" link_add ns1 sroce1 va
t "rdma link add sroce2 on vb in ns2 again" link_add ns2 sroce2 vb
t "ns1 deleted" ip netns del ns1
t "sroce1 and sroce2 gone with the veth pair" wait_for 30 bash -c \
	"[ -z \"\$(ip netns exec ns2 rdma dev show)\" ] && [ -z \"\$(rdma dev show)\" ]"
t "ns2's UDP port 4791 closed with its last device" wait_for 10 \
	bash -c "[ \"\$(ip netns exec ns2 grep -c ':12B7 ' /proc/net/udp)\" = 0 ]"
ip netns del ns2
ip netns del root	# (the name only)
# Shared mode again for what runs next in this boot (once the namespaces
# are gone: ib_core refuses while any exists).
t "rdma system set netns shared" wait_for 60 rdma system set netns shared
t "rmmod sroce" rmmod sroce
kmemleak_check
finish
