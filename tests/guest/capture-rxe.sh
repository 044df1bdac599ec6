#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Two VMs: capture real RoCEv2 traffic of the in-kernel rdma_rxe driver (not
# sroce) as a reference for sroce's ICRC. Guest 1 serves ibv_rc_pingpong,
# guest 0 runs the client, once over IPv4 and once over IPv6 GIDs, while
# tshark on guest 0 records UDP port 4791 to $SROCE_OUT/rxe.pcap.
# Used by scripts/make-icrc-fixture.sh.
set -u
. "$(dirname "$0")/lib.sh"

me=$SROCE_VM_INDEX
peer=$((1 - me))
out=${SROCE_OUT:?}

has_gid() { gid_lookup rxe0 "$1" >/dev/null; }

# exited PID: PID is gone or a zombie (kill -0 succeeds on a zombie).
exited() {
	local st
	st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) || return 0
	[ "${st%% *}" = Z ]
}
listening() { [ -n "$(ss -Hltn "sport = :$1")" ]; }

# Both GIDs of this guest in sysfs format: the IPv4 one is v4-mapped.
n=$((me + 1))
gid4=$(printf '0000:0000:0000:0000:0000:ffff:c612:%04x' "$n")
gid6=$(printf '2001:0002:0000:0000:0000:0000:0000:%04x' "$n")

t "modprobe rdma_rxe" modprobe rdma_rxe
# ibv_* open /dev/infiniband/uverbs0, which rdma_rxe alone does not provide.
t "modprobe ib_uverbs" modprobe ib_uverbs
t "rdma link add rxe0" rdma link add rxe0 type rxe netdev eth0
t "IPv4 RoCE v2 GID present" wait_for 30 has_gid "$gid4"
t "IPv6 RoCE v2 GID present" wait_for 30 has_gid "$gid6"
idx4=$(gid_lookup rxe0 "$gid4") || idx4=missing
idx6=$(gid_lookup rxe0 "$gid6") || idx6=missing
echo "# rxe0 GID index: IPv4 $idx4, IPv6 $idx6"
ibv_devinfo -v -d rxe0 > "$out/devinfo.txt" 2>&1
if [ "$me" -eq 0 ]; then
	# tshark takes ~20 s to start under TCG; let that overlap the wait for
	# the peer. -F pcap: a classic pcap is all the host's reader understands.
	tshark -i eth0 -f 'udp port 4791' -F pcap -w /tmp/rxe.pcap \
		> "$out/tshark.log" 2>&1 &
	tshark_pid=$!
fi
# Resolve neighbours up front so no run starts with a lost first packet.
t "peer reachable over IPv4" wait_for 60 ping -c1 -W1 "198.18.0.$((peer + 1))"
t "peer reachable over IPv6" wait_for 60 ping -6 -c1 -W1 "2001:2::$((peer + 1))"
# Without rxe0 and its GIDs nothing below can work; the peer's barrier
# times out.
[ "$T_FAILED" -eq 0 ] || { finish; exit 1; }
t "both guests ready" guest_barrier ready 120

# run_pair TAG GID_INDEX PORT: one ibv_rc_pingpong exchange. The control
# channel is TCP over IPv4 either way; the GID picks the RoCE IP version.
run_pair() {
	local tag=$1 idx=$2 port=$3 pid rc
	local args=(-d rxe0 -g "$idx" -s 64 -n 4 -p "$port")
	if [ "$me" -eq 1 ]; then
		timeout 60 ibv_rc_pingpong "${args[@]}" > "$out/server-$tag.log" 2>&1 &
		pid=$!
		# The client tries to connect once, so it must not start early.
		if wait_for 30 listening "$port"; then
			signal "listen-$tag"
		else
			not_ok "$tag server listening"
		fi
		wait "$pid"
		rc=$?
		t "$tag server" test "$rc" -eq 0
		sed 's/^/#   /' "$out/server-$tag.log"
	else
		if ! wait_for 60 signalled "listen-$tag"; then
			not_ok "$tag server never listened"
			return
		fi
		t "$tag client" timeout 60 ibv_rc_pingpong "${args[@]}" 198.18.0.2
	fi
}

if [ "$me" -eq 0 ]; then
	# Only once dumpcap reports this is the filter installed.
	t "tshark capturing" wait_for 60 grep -q "^Capturing on 'eth0'" "$out/tshark.log"
fi
t "capture started" guest_barrier capture 120

run_pair ipv4 "$idx4" 18515
t "IPv4 run done" guest_barrier ipv4 120
run_pair ipv6 "$idx6" 18516
t "IPv6 run done" guest_barrier ipv6 120

if [ "$me" -eq 0 ]; then
	# SIGINT makes dumpcap flush and close the file. Poll for the exit
	# rather than use a background watchdog: its sleep would hold run.sh's
	# tee open long after this script ends.
	kill -INT "$tshark_pid"
	wait_for 30 exited "$tshark_pid" || kill -KILL "$tshark_pid"
	wait "$tshark_pid"
	t "tshark exited cleanly" test $? -eq 0
	t "pcap copied out" cp /tmp/rxe.pcap "$out/rxe.pcap"
	t "pcap holds packets" test "$(stat -c %s "$out/rxe.pcap")" -gt 24
fi
t "rdma link delete rxe0" rdma link delete rxe0
finish
