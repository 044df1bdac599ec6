#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Two VMs over the Debian kernel's rdma_rxe (not sroce): guest 1 serves
# tools/sroce-integrity, guest 0 drives it over IPv4 and IPv6, then once
# with --inject-mismatch on each side to prove a corrupted byte fails the
# run. A reference for what sroce must pass later.
#
# Usage: integrity-rxe.sh [BYTES]   (default 64M per clean run)
set -u
. "$(dirname "$0")/lib.sh"

bytes=${1:-64M}
me=$SROCE_VM_INDEX
peer=$((1 - me))
out=${SROCE_OUT:?}
tool=$SROCE_TREE/tools/sroce-integrity
ports=/sys/class/infiniband/rxe0/ports/1

# rdma_cm finds the device through a GID made from the IP address; rxe
# fills its GID table asynchronously after `rdma link add`.
has_gid() { grep -qxF "$1" "$ports"/gids/* 2>/dev/null; }

# The summary and any complaint of a run, as TAP comments.
show() { grep -E '^(integrity|MISMATCH|ERROR|inject|warning)' "$1" | head -n 20 | sed 's/^/#   /'; }

# rxe's non-zero counters so far (retransmissions explain slow runs).
counters() {
	echo "# rxe0 counters after $1: $(rdma statistic show link rxe0/1 |
		tr ' ' '\n' |
		awk 'prev ~ /_/ && $0 != 0 { printf "%s=%s ", prev, $0 }
			{ prev = $0 }')"
}

# run_case TAG WANT_SERVER WANT_CLIENT 'SERVER ARGS' 'CLIENT ARGS'
# WANT_*: 0 for a clean exit, 1 for a failure that reports a mismatch.
# Arguments are split on spaces.
run_case() {
	local tag=$1 want_s=$2 want_c=$3 log rc pid
	# shellcheck disable=SC2206 # word splitting wanted
	local sargs=($4) cargs=($5)
	if [ "$me" -eq 1 ]; then
		log=$out/$tag-server.log
		timeout 600 "$tool" -s --listen-timeout 240 "${sargs[@]}" \
			> "$log" 2>&1 &
		pid=$!
		if wait_for 60 grep -q 'listening' "$log"; then
			signal "listen-$tag"
		else
			not_ok "$tag: server listening"
		fi
		wait "$pid"
		rc=$?
		check_rc "$tag: server" "$want_s" "$rc" "$log"
	else
		log=$out/$tag-client.log
		if wait_for 180 signalled "listen-$tag"; then
			# -v: every message's time lands in the log
			timeout 600 "$tool" -v "${cargs[@]}" > "$log" 2>&1
			rc=$?
			check_rc "$tag: client" "$want_c" "$rc" "$log"
		else
			not_ok "$tag: server never listened"
		fi
	fi
	counters "$tag"
	t "$tag: both done" barrier "done-$tag"
}

# check_rc NAME WANT RC LOG
check_rc() {
	local name=$1 want=$2 rc=$3 log=$4
	if [ "$want" = 0 ]; then
		t "$name exits 0" test "$rc" -eq 0
	else
		# A mismatch must be reported and must fail the run; a crash,
		# a timeout or a hang is not what is being tested.
		t "$name fails (rc $rc) on the injected byte" \
			bash -c "[ $rc -eq 1 ] && grep -q MISMATCH '$log'"
	fi
	show "$log"
	[ "$rc" -eq 0 ] || [ "$want" != 0 ] || tail -n 20 "$log" | sed 's/^/#   /'
}

n=$((me + 1))
gid4=$(printf '0000:0000:0000:0000:0000:ffff:c612:%04x' "$n")
gid6=$(printf '2001:0002:0000:0000:0000:0000:0000:%04x' "$n")

t "tool built" test -x "$tool"
t "modprobe rdma_rxe" modprobe rdma_rxe
# ibverbs needs /dev/infiniband/uverbs0, librdmacm /dev/infiniband/rdma_cm;
# without udev nothing loads them on demand.
t "modprobe ib_uverbs" modprobe ib_uverbs
t "modprobe rdma_ucm" modprobe rdma_ucm
t "rdma link add rxe0" rdma link add rxe0 type rxe netdev eth0
t "IPv4 RoCE GID present" wait_for 30 has_gid "$gid4"
t "IPv6 RoCE GID present" wait_for 30 has_gid "$gid6"
# Resolve neighbours up front so rdma_cm's address resolution is quick.
t "peer reachable over IPv4" wait_for 60 ping -c1 -W1 "198.18.0.$((peer + 1))"
t "peer reachable over IPv6" wait_for 60 ping -6 -c1 -W1 "2001:2::$((peer + 1))"
[ "$T_FAILED" -eq 0 ] || { finish; exit 1; }
t "both guests ready" guest_barrier ready 180

# Fixed seeds: a failure can be replayed with the same messages.
# READs stay at 64K here: rxe paces WRITE and SEND with a window of 128
# unacknowledged packets, but sends all response packets of a READ at
# once, and the emulated link drops the tail of a long burst; every retry
# resends the whole rest, so a 4M READ can take tens of seconds.
mix="--bytes $bytes --max-read 64K"
run_case ipv4 0 0 "-p 18777" \
	"-c 198.18.0.2 -p 18777 $mix --seed 1"
run_case ipv6 0 0 "-p 18778 -b 2001:2::2" \
	"-c 2001:2::2 -p 18778 $mix --seed 2"
run_case ipv4-depth8 0 0 "-p 18779" \
	"-c 198.18.0.2 -p 18779 $mix --seed 3 --depth 8"
# Thousands of tiny messages, 16 in flight: the protocol more than data.
run_case ipv6-small-depth16 0 0 "-p 18783" \
	"-c 2001:2::2 -p 18783 --bytes 64K --max-size 64 --seed 7 --depth 16"
# Big READs anyway, through rxe's retransmissions, with time to spare.
run_case ipv6-big-reads 0 0 "-p 18780 --timeout 150" \
	"-c 2001:2::2 -p 18780 --bytes 8M --max-size 1M --ops read,send --seed 4 --timeout 150"
# The server corrupts the first byte it checks: both ends must fail.
run_case inject-server 1 1 "-p 18781 --inject-mismatch" \
	"-c 2001:2::2 -p 18781 --bytes 4M --seed 5 --ops send,write,write_imm"
# The client corrupts the first READ it checks; the server saw no fault.
run_case inject-client 0 1 "-p 18782" \
	"-c 198.18.0.2 -p 18782 --bytes 1M --max-size 64K --seed 6 --ops read --inject-mismatch"

t "rdma link delete rxe0" rdma link delete rxe0
finish
