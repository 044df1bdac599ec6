#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The RDMA stacks people run, from the userland's own Debian packages,
# between two guests: middleware.sh DRV0 DRV1 [PARTS]
#   UCX: ucx_info lists the device's verbs transports; ucx_perftest over
#        RC and UD at the UCT level, and UCP tag matching and RMA forced
#        onto each transport;
#   Open MPI over UCX: a ping-pong with data checks (mpi_pingpong.py), its
#        two ranks in different guests, UCX held to the RDMA device;
#   libfabric's verbs provider: fi_pingpong with data checks, msg and rdm
#        (verbs;ofi_rxm) endpoints;
#   qperf over rdma_cm: RC and UD bandwidth and latency, RDMA READ/WRITE.
# Each pair must move its bytes through the devices: their receive
# counters grow by at least what the tool moved.
# Against rdma_rxe (either DRV rxe) the RC parts only: rdma_rxe reports a
# UD completion's SL as 0, where UCX before 1.19 reads the address family
# (Documentation/abi.rst), so UCX's UD, UCP and Open MPI time out on it;
# and its CQs hold 32767 entries, fewer than libfabric's rxm asks for.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/guest/lib.sh
. "$here/lib.sh"

DRVS=("${1:?usage: middleware.sh DRV0 DRV1 [PARTS]}" "${2:?usage: middleware.sh DRV0 DRV1 [PARTS]}")
# PARTS: some of ucx,mpi,libfabric,qperf (all by default), for a focused run.
PARTS=,${3:-ucx,mpi,libfabric,qperf},
part() { [[ $PARTS == *,$1,* ]]; }
me=$RDMA_ME
T_ONE=120
[ "${SROCE_KERNEL:-}" != debug ] || T_ONE=600

kmemleak_clear
# ucx_perftest's server takes the client's device name for its own: when
# the drivers differ, both devices get one name.
name=
[ "${DRVS[0]}" = "${DRVS[1]}" ] || name=roce0
if setup_rdma "${DRVS[me]}" $name; then
	ok "vm$me: ${DRVS[me]} device $DEV up"
else
	not_ok "vm$me: ${DRVS[me]} device $DEV up"
fi
t "peer reachable over IPv4" wait_for 60 ping -c1 -W1 "$PEER_V4"

# rx_bytes of this guest's device, to see that a pair's bytes came
# through it and not through TCP or shared memory. rdma_rxe counts no
# bytes: its netdev's count stands in (the tools' TCP setup adds a few
# kilobytes).
rxb() {
	if [ "${DRVS[me]}" = rxe ]; then
		cat /sys/class/net/eth0/statistics/rx_bytes
	else
		counter rx_bytes "$DEV"
	fi
}

# moved NAME BEFORE MIN: both devices together received at least MIN
# bytes since BEFORE (rxb, on each guest); a check of its own, on both.
moved() {
	local f=$RDMA_SYNC/moved.$RDMA_SEQ got
	echo $(($(rxb) - $2)) >"$f.$me"
	barrier "moved $1"
	got=$(($(cat "$f.0") + $(cat "$f.1")))
	if [ "$got" -ge "$3" ]; then
		ok "$1: $got bytes through the devices (>= $3)"
	else
		not_ok "$1: $got bytes through the devices, fewer than $3"
	fi
}

# ucx NAME MIN UCX_TLS ARGS...: ucx_perftest between the guests, vm0
# the server, both held to the RDMA device. A ucx_perftest built with
# MPI (Debian 13's) would take its peer from MPI: -P 0 says no.
UCX_NOMPI=()
! ucx_perftest -h 2>&1 | grep -q -- '-P <0|1>' || UCX_NOMPI=(-P 0)
ucx() {
	local name=$1 min=$2 tls=$3 b
	shift 3
	b=$(rxb)
	pair "ucx_perftest $name" 0 "$T_ONE" \
		env UCX_NET_DEVICES="$DEV:1" UCX_TLS="$tls" ucx_perftest "${UCX_NOMPI[@]}" -p @PORT@ "$@" -- \
		env UCX_NET_DEVICES="$DEV:1" UCX_TLS="$tls" ucx_perftest "${UCX_NOMPI[@]}" "$PEER_V4" -p @PORT@ "$@"
	moved "ucx_perftest $name" "$b" "$min"
	[ "$me" = 0 ] || grep -E '^ *Final:' "$PAIR_LOG" | sed "s/^ */# $name /"
}

N=200
# UCT over RC, and (both sides sroce) UCT over UD and UCP over each.
ucx_tests() {
	ucx "rc_verbs am_lat" $((N * 8)) rc_verbs -d "$DEV:1" -x rc_verbs -t am_lat -n $N
	ucx "rc_verbs put_bw 64k zcopy" $((N * 65536)) rc_verbs -d "$DEV:1" -x rc_verbs -t put_bw -D zcopy -s 65536 -n $N
	ucx "rc_verbs get 64k zcopy" $((N * 65536)) rc_verbs -d "$DEV:1" -x rc_verbs -t get -D zcopy -s 65536 -n $N
	[ "$1" = rc ] && return
	ucx "ud_verbs am_lat" $((N * 8)) ud_verbs -d "$DEV:1" -x ud_verbs -t am_lat -n $N
	ucx "ud_verbs am_bw 900 bcopy" $((N * 900)) ud_verbs -d "$DEV:1" -x ud_verbs -t am_bw -D bcopy -s 900 -n $N
	ucx "ucp tag_lat over ud" $((N * 8)) ud_verbs -t tag_lat -n $N
	ucx "ucp tag_bw 1M over ud" $((20 * 1048576)) ud_verbs -t tag_bw -s 1048576 -n 20
	ucx "ucp tag_lat over rc" $((N * 8)) rc_verbs,ud_verbs -t tag_lat -n $N
	ucx "ucp tag_bw 1M over rc" $((20 * 1048576)) rc_verbs,ud_verbs -t tag_bw -s 1048576 -n 20
	ucx "ucp_put_bw 64k over rc" $((N * 65536)) rc_verbs,ud_verbs -t ucp_put_bw -s 65536 -n $N
}

# Open MPI: vm0 runs mpirun; its launcher (mpi-agent.sh) reaches vm1
# through the shared directory, where mpi_agent_serve starts the daemon,
# which connects back over TCP. The ranks talk through UCX on the RDMA
# device only (no shared memory, no TCP).
MPI_DIR=$RDMA_SYNC/mpi
export MPI_DIR
mpi_agent_serve() {
	local n=0
	mkdir -p "$MPI_DIR"
	while [ ! -e "$MPI_DIR/stop" ]; do
		if [ -e "$MPI_DIR/$n.cmd" ]; then
			(bash -c "$(cat "$MPI_DIR/$n.cmd")" >"$MPI_DIR/$n.out" 2>&1
			 echo $? >"$MPI_DIR/$n.rc") &
			n=$((n + 1))
		fi
		sleep 0.1
	done
	wait
}

mpi_run() {
	local name="mpirun: 2 ranks in 2 guests, pml ucx over $DEV, data checked"
	local log=$RDMA_LOGS/mpi.log
	local -a env=(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
		PRTE_ALLOW_RUN_AS_ROOT=1 PRTE_ALLOW_RUN_AS_ROOT_CONFIRM=1
		OMPI_MCA_plm_rsh_agent="$here/mpi-agent.sh"
		PRTE_MCA_plm_ssh_agent="$here/mpi-agent.sh"
		OMPI_MCA_plm_rsh_no_tree_spawn=1 PRTE_MCA_plm_ssh_no_tree_spawn=1)
	mkdir -p "$RDMA_LOGS"
	if timeout -k 3 $((T_ONE * 2)) env "${env[@]}" \
		mpirun -np 2 --host "$(hostname):1,$MPI_PEER:1" --mca pml ucx --mca btl self \
		-x UCX_NET_DEVICES="$DEV:1" -x UCX_TLS=rc_verbs,ud_verbs,self \
		python3 "$here/mpi_pingpong.py" 20 >"$log" 2>&1; then
		ok "$name"
	else
		not_ok "$name"
		tr -d '\0' <"$log" | tail -n 30 | sed 's/^/#   /'
	fi
	tr -d '\0' <"$log" | grep -E '^(size|[0-9]+ messages)' | sed 's/^/# mpi: /'
}

# Open MPI 5 (PRRTE) maps ranks by host name, which the daemon reports
# (its address in --host finds no slot): both guests get names.
MPI_PEER=sroce-vm$RDMA_PEER
mpi_hosts() {
	[ "$(hostname)" = "sroce-vm$me" ] || return 1
	printf '127.0.0.1 localhost\n%s %s\n%s %s\n' \
		"$MY_V4" "$(hostname)" "$PEER_V4" "$MPI_PEER" >/tmp/mpi-hosts &&
		mount --bind /tmp/mpi-hosts /etc/hosts
}

mpi_test() {
	local b agent f
	t "host names for MPI in /etc/hosts" mpi_hosts
	b=$(rxb)
	if [ "$me" = 1 ]; then
		mpi_agent_serve &
		agent=$!
		barrier "mpi done" $((T_ONE * 3))
		touch "$MPI_DIR/stop"
		wait "$agent"
		for f in "$MPI_DIR"/*.out; do
			[ ! -s "$f" ] || sed 's/^/# vm1 daemon: /' "$f"
		done
	else
		mpi_run
		barrier "mpi done" $((T_ONE * 3))
	fi
	# Rank 1 received 20 rounds of each size from rank 0, and rank 0
	# as many.
	moved "mpi ping-pong" "$b" $((40 * (1 + 64 + 4095 + 4096 + 65537 + 1048576)))
	umount /etc/hosts
}

# libfabric's verbs provider: fi_pingpong, every size up to its largest,
# data checked (-c).
fi_pair() {
	local ep=$1 b
	b=$(rxb)
	FI_LOG_LEVEL=warn pair "fi_pingpong verbs $ep -c" 0 "$T_ONE" \
		fi_pingpong -p "verbs${2:-}" -e "$ep" -c -I 4 -B @PORT@ -- \
		fi_pingpong -p "verbs${2:-}" -e "$ep" -c -I 4 -P @PORT@ "$PEER_V4"
	# Each way 4 messages of 1 MiB, and all the smaller sizes.
	moved "fi_pingpong $ep" "$b" $((8 * 1048576))
	[ "$me" = 1 ] || grep -E '^[0-9]+(k|m)? ' "$PAIR_LOG" | tail -n 3 | sed "s/^/# fi $ep: /"
}

# qperf over rdma_cm (-cm1), its RC tests, one client run each:
# qperf-client.sh repeats a test whose connect lost qperf's own race. Its
# UD tests make an address handle without a GRH (they ignore -cm1), which
# ib_core refuses on every RoCE device (rdma_check_ah_attr): they cannot
# run on RoCE.
QPERF_TESTS=(rc_bw rc_bi_bw rc_lat rc_rdma_write_bw rc_rdma_write_lat
	rc_rdma_read_bw rc_rdma_read_lat rc_compare_swap_mr rc_fetch_add_mr)
qperf_test() {
	local b
	b=$(rxb)
	PAIR_LINGER_OK=true PAIR_LINGER_WHY="qperf's server serves until it is killed" \
		pair "qperf -cm1 ${QPERF_TESTS[*]}" 0 "$T_ONE" \
		qperf -lp @PORT@ -- \
		"$here/qperf-client.sh" "$PEER_V4" @PORT@ "${QPERF_TESTS[@]}"
	moved qperf "$b" 1000000
	[ "$me" = 0 ] || awk '/^[a-z_]+:$/ { t = $1; next }
		t && NF { $1 = $1; print "# qperf " t " " $0; t = "" }' "$PAIR_LOG"
}

both=rc
[ "${DRVS[*]}" != "sroce sroce" ] || both=all
if part ucx; then
	for tl in rc_verbs ud_verbs; do
		t "ucx_info -d: $DEV:1 has $tl" bash -c \
			"ucx_info -d | awk '/Transport:/ { t = \$3 } /Device:/ { if (t == \"$tl\" && \$3 == \"$DEV:1\") f = 1 } END { exit !f }'"
	done
	echo "# UCX $(ucx_info -v | head -n1 | tr -d '#')"
	ucx_tests $both
fi
! part mpi || [ $both = rc ] || mpi_test
if part libfabric; then
	fi_pair msg
	[ $both = rc ] || fi_pair rdm ";ofi_rxm"
fi
! part qperf || qperf_test

teardown_rdma "${DRVS[me]}"
kmemleak_check
finish
