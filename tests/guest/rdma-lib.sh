# SPDX-License-Identifier: GPL-2.0
# Helpers for guest-side RDMA traffic tests between the guests of one
# vm-run.sh (or one guest talking to itself). Source after lib.sh.
#
#   setup_rdma DRIVER     create the device (sroce or rxe), set DEV
#   gid_index DEV v4|v6   GID index of this guest's RoCE v2 GID
#   barrier NAME [SECS]   wait (bounded) until both guests reach it
#   pair NAME SERVER_VM SECS SERVER_CMD... -- CLIENT_CMD...
#                         run one server/client pair across the guests

# Addresses set up by guest-init.sh; the scripts sourcing this use them.
# shellcheck disable=SC2034
RDMA_ME=${SROCE_VM_INDEX:?}
RDMA_PEER=$((1 - RDMA_ME))
MY_V4=198.18.0.$((RDMA_ME + 1))
MY_V6=2001:2::$((RDMA_ME + 1))
PEER_V4=198.18.0.$((RDMA_PEER + 1))
PEER_V6=2001:2::$((RDMA_PEER + 1))
# VLAN 7 on eth0 (vlan_up), for RoCE over a VLAN netdev's GID.
MY_VLAN_V4=198.18.7.$((RDMA_ME + 1))
RDMA_SYNC=$SROCE_SHARED/sync
RDMA_SEQ=0		# barriers and pairs, numbered in the order both guests run them
RDMA_LOGS=$SROCE_OUT/logs	# full output of every pair, kept on the host
DEV=

# vlan_up: VLAN 7 on eth0 as eth0.7 with MY_VLAN_V4; the RDMA device on
# eth0 lists that address as a GID of its own.
vlan_up() {
	modprobe 8021q 2>/dev/null
	ip link add link eth0 name eth0.7 type vlan id 7 &&
		ip addr add "$MY_VLAN_V4/24" dev eth0.7 &&
		ip link set eth0.7 up
}

# setup_rdma DRIVER [NAME]: create the RDMA device of DRIVER (sroce or rxe)
# on eth0, named NAME (sroce0 or rxe0 by default), and wait for its port to
# be active. DEV is set even when this fails.
setup_rdma() {
	case $1 in
	sroce)
		DEV=${2:-sroce0}
		install_sroce || return 1
		rdma link add "$DEV" type sroce netdev eth0 || return 1
		;;
	rxe)
		DEV=${2:-rxe0}
		modprobe rdma_rxe || return 1
		rdma link add "$DEV" type rxe netdev eth0 || return 1
		;;
	*)
		echo "setup_rdma: unknown driver '$1' (sroce or rxe)" >&2
		return 2
		;;
	esac
	wait_for 20 bash -c "[ \"\$(cat /sys/class/infiniband/$DEV/ports/1/state)\" = '4: ACTIVE' ]"
}

# teardown_rdma DRIVER: delete $DEV and unload DRIVER's module; both
# drivers bind UDP 4791, so the next test may then use the other.
teardown_rdma() {
	t "rdma link delete $DEV" rdma link delete "$DEV"
	if [ "$1" = sroce ]; then
		t "rmmod sroce" rmmod sroce
	else
		t "rmmod rdma_rxe" modprobe -r rdma_rxe
	fi
}

# gid_index DEV v4|v6: the index of the RoCE v2 GID of this guest's IPv4
# address (IPv4-mapped) or global IPv6 address; waits up to 20 s for it.
gid_index() {
	local dev=$1 want end
	case $2 in
	v4) want=$(gid_of "$MY_V4") ;;
	v6) want=$(gid_of "$MY_V6") ;;
	vlan) want=$(gid_of "$MY_VLAN_V4") ;;
	*) echo "gid_index: v4, v6 or vlan, not '$2'" >&2; return 2 ;;
	esac
	end=$((SECONDS + 20))
	while [ "$SECONDS" -lt "$end" ]; do
		gid_lookup "$dev" "$want" && return 0
		sleep 0.2
	done
	echo "gid_index: no RoCE v2 GID $want on $dev" >&2
	return 1
}

# barrier NAME [SECS]: mark this guest as having reached NAME and wait, at
# most SECS (default 120), for the other guest to reach it too. Every call
# gets the next sequence number (shared with pair), so each barrier's files
# are unique in a run and a name may be reused; vm-run.sh empties the shared
# directory before each run.
barrier() {
	local name
	RDMA_SEQ=$((RDMA_SEQ + 1))
	name=$RDMA_SEQ.$1
	mkdir -p "$RDMA_SYNC"
	touch "$RDMA_SYNC/$name.$RDMA_ME"
	wait_for "${2:-120}" test -e "$RDMA_SYNC/$name.$RDMA_PEER"
}

# The first line of a file (empty when missing).
first_line() { head -n1 "$1" 2>/dev/null; }

# pair NAME SERVER_VM SECS SERVER_CMD... -- CLIENT_CMD...
# Both guests call this with the same arguments in the same order. The
# guest SERVER_VM starts SERVER_CMD in the background, waits until it listens
# (see pair_listening) and says so through a shared file; the other guest
# waits for that and runs CLIENT_CMD. Each command runs under `timeout SECS`;
# a server still running a few seconds after its client ended is killed.
# Each side reports one TAP line, "NAME (server)" or "NAME (client)", and
# keeps its output in $RDMA_LOGS. The word @PORT@ in either command becomes
# a TCP/rdma_cm port of its own for this pair; a server with a port of its
# own that cannot be changed (udaddy) names it in PAIR_LISTEN_PORT.
# The outcome is left in PAIR_NAME, PAIR_RC, PAIR_LOG and PAIR_T0.
# A server that had to be killed fails, unless PAIR_LINGER_OK names a
# command that, given the server's log, accepts it (after a client that
# passed); PAIR_LINGER_WHY then says why, in the TAP output.
pair() {
	local name=$1 server_vm=$2 secs=$3 id port log rc s
	local -a scmd=() ccmd=()
	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do scmd+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	ccmd=("$@")
	RDMA_SEQ=$((RDMA_SEQ + 1))
	id=$RDMA_SEQ
	port=$((20000 + id))
	scmd=("${scmd[@]//@PORT@/$port}")
	ccmd=("${ccmd[@]//@PORT@/$port}")
	mkdir -p "$RDMA_SYNC" "$RDMA_LOGS"
	log=$RDMA_LOGS/$(printf '%03d' "$id")-$(echo "$name" | tr -c 'a-zA-Z0-9.=\n-' '_')
	s=$(date +%s)
	if [ "$server_vm" = "$RDMA_ME" ]; then
		log+=.server.log
		echo "# $name: server: ${scmd[*]}" >"$log"
		# stdbuf: a killed tool's progress still reaches the log.
		timeout -k 3 "$((secs + 90))" stdbuf -oL "${scmd[@]}" >>"$log" 2>&1 &
		local pid=$!
		if pair_wait_listening "${PAIR_LISTEN_PORT:-$port}" "$pid"; then
			touch "$RDMA_SYNC/$id.listening"
		else
			echo "# server exited, or not listening on port ${PAIR_LISTEN_PORT:-$port} after 30 s" >>"$log"
			touch "$RDMA_SYNC/$id.failed"
		fi
		# Until the client is done (bounded by its own timeout plus its
		# wait for us), then a few seconds' grace. The log says how long
		# a server that exited by itself took after its client.
		local deadline=$((s + secs + 180)) grace='' lingered=0 cdone=''
		while kill -0 "$pid" 2>/dev/null; do
			if [ -z "$grace" ] && [ -e "$RDMA_SYNC/$id.done" ]; then
				cdone=$(date +%s)
				grace=$((cdone + 5))
			fi
			if [ -n "$grace" ] && [ "$(date +%s)" -ge "$grace" ] ||
				[ "$(date +%s)" -ge "$deadline" ]; then
				echo "# the server is still running after the client ended; its threads:" >>"$log"
				pair_stacks "$pid" >>"$log" 2>&1
				kill "$pid" 2>/dev/null
				lingered=1
				break
			fi
			sleep 0.2
		done
		wait "$pid"
		rc=$?
		[ -z "$cdone" ] || [ "$lingered" = 1 ] ||
			echo "# server exited $(($(date +%s) - cdone)) s after the client" >>"$log"
		if [ "$lingered" = 1 ] && [ -n "${PAIR_LINGER_OK:-}" ] &&
			[ "$(first_line "$RDMA_SYNC/$id.done")" = 0 ] &&
			$PAIR_LINGER_OK "$log"; then
			echo "# tolerated: $PAIR_LINGER_WHY" >>"$log"
			echo "# $name (server): did not exit by itself; tolerated: $PAIR_LINGER_WHY"
			rc=0
		fi
		# The server's status, for the client's guest (pair_both_ok).
		echo "$rc" >"$RDMA_SYNC/$id.srv"
		# Both guests go on in step: wait for the client's verdict too.
		local left=$((deadline - $(date +%s)))
		[ "$left" -gt 0 ] || left=1
		wait_for "$left" test -e "$RDMA_SYNC/$id.done" ||
			echo "# the client never finished" >>"$log"
		PAIR_NAME="$name (server)"
	else
		log+=.client.log
		echo "# $name: client: ${ccmd[*]}" >"$log"
		if ! wait_for $((secs + 60)) pair_ready "$id"; then
			echo "# server never said it was listening" >>"$log"
			rc=125
		elif [ -e "$RDMA_SYNC/$id.failed" ]; then
			echo "# server failed to start" >>"$log"
			rc=125
		else
			timeout -k 3 "$secs" stdbuf -oL "${ccmd[@]}" >>"$log" 2>&1
			rc=$?
		fi
		echo "$rc" >"$RDMA_SYNC/$id.done"
		# And the server's status (it is killed 5 s after us at most).
		wait_for 60 test -e "$RDMA_SYNC/$id.srv" ||
			echo "# the server never finished" >>"$log"
		PAIR_NAME="$name (client)"
	fi
	PAIR_RC=$rc PAIR_LOG=$log PAIR_T0=$s
	[ -n "${PAIR_DEFER:-}" ] || pair_report_last
	[ "$rc" = 0 ]
}

# The TAP line of the last pair on this guest (pair prints it itself unless
# PAIR_DEFER is set, for a caller that may run the pair again first).
pair_report_last() { pair_report "$PAIR_NAME" "$PAIR_RC" "$PAIR_LOG" "$PAIR_T0"; }

# pair_stacks PID: where each process below PID (timeout(1)) and each of
# its threads wait, for a server that did not exit.
pair_stacks() {
	local c t
	for c in $(pgrep -P "$1"); do
		echo "#   pid $c: $(tr '\0' ' ' <"/proc/$c/cmdline")"
		for t in /proc/"$c"/task/*; do
			echo "#   thread ${t##*/} in $(cat "$t/wchan"):"
			sed 's/^/#     /' "$t/stack"
		done
		pair_stacks "$c"
	done
}

# pair_wait_listening PORT PID: up to 30 s, as long as PID lives.
pair_wait_listening() {
	local end=$((SECONDS + 30))
	while [ "$SECONDS" -lt "$end" ] && kill -0 "$2" 2>/dev/null; do
		pair_listening "$1" "$2" && return 0
		sleep 0.1
	done
	return 1
}

# The exit code of the client of the last pair (on either guest; empty if
# it never finished).
pair_client_rc() { first_line "$RDMA_SYNC/$RDMA_SEQ.done"; }

# pair_both_ok: both sides of the last pair exited 0. Each guest has both
# statuses once pair returns (the client's .done, the server's .srv), so
# both reach the same verdict, whichever side failed.
pair_both_ok() {
	[ "$(pair_client_rc)" = 0 ] &&
		[ "$(first_line "$RDMA_SYNC/$RDMA_SEQ.srv")" = 0 ]
}

pair_ready() { [ -e "$RDMA_SYNC/$1.listening" ] || [ -e "$RDMA_SYNC/$1.failed" ]; }

# pair_listening PORT PID: the server PID is alive and listens on PORT,
# either on TCP (perftest and ibv_*_pingpong exchange their QP numbers over
# TCP) or through rdma_cm (perftest -R, rping).
pair_listening() {
	kill -0 "$2" 2>/dev/null || return 1
	[ -n "$(ss -Hltn "sport = :$1")" ] && return 0
	rdma resource show cm_id 2>/dev/null | grep -q "state LISTEN.*src-addr .*:$1 "
}

pair_report() {
	local name=$1 rc=$2 log=$3 s=$4 took
	took=$(($(date +%s) - s))
	echo "# $name: exit $rc after ${took}s" >>"$log"
	if [ "$rc" = 0 ]; then
		ok "$name"
	else
		not_ok "$name"
		[ "$rc" != 124 ] || echo "#   timed out"
		tail -n 25 "$log" | sed 's/^/#   /'
	fi
	echo "#   ${took}s"
}

# Processes and devices, for the teardown tests (chaos.sh, chaos-peer.sh).
port_active() {
	[ "$(cat "/sys/class/infiniband/$1/ports/1/state" 2>/dev/null)" = "4: ACTIVE" ]
}
rx_packets() {
	cat "/sys/class/infiniband/$1/ports/1/hw_counters/rx_packets" 2>/dev/null || echo 0
}
alive() { kill -0 "$1" 2>/dev/null; }
# gone SECS PID...: wait until every PID has exited (bounded).
gone() {
	local secs=$1 p i
	shift
	for ((i = 0; i < secs * 10; i++)); do
		for p in "$@"; do alive "$p" && break; done
		alive "$p" || return 0
		sleep 0.1
	done
	return 1
}
# Name what a process that did not end is doing, for the log.
stuck() {
	local p
	for p in "$@"; do
		alive "$p" || continue
		echo "# pid $p ($(cat /proc/"$p"/comm 2>/dev/null)) state" \
			"$(awk '/^State/ { print $2 }' /proc/"$p"/status 2>/dev/null)"
		sed 's/^/#   /' /proc/"$p"/stack 2>/dev/null | head -n 12
	done
}

# A victim beside a hostile process (scribble.sh, stress.sh): integrity
# pairs through rdma_cm in loopback on sroce0, one run after another until
# victim_verdict stops them (at least one). Each run moves VICTIM_BYTES
# (64M; 4M in the debug kernel, where KASAN moves about 0.5 MB/s and a
# 64M run held up the end by 146 s).
#   victim_start DIR SEED     starts them, logs and exit codes in DIR
#   victim_verdict            stops them, checks every run was clean
#   victim_device_up          sroce0 for both (and the hostile process),
#                             its IPv4 GID's index in VICTIM_GI
VICTIM_BYTES=64M
[ "${SROCE_KERNEL:-}" != debug ] || VICTIM_BYTES=4M
victim_loop() {
	local dir=$1 seed=$2 n=0 srv port
	local tool=$SROCE_TREE/tools/sroce-integrity
	while :; do
		port=$((18900 + n % 50))
		"$tool" -s -b "$MY_V4" -p "$port" --listen-timeout 60 \
			--timeout 60 >"$dir/isrv.$n" 2>&1 &
		srv=$!
		# (the hostile process keeps the CPUs busy: wait for the listener)
		wait_for 30 grep -q 'server listening' "$dir/isrv.$n"
		"$tool" -c "$MY_V4" -p "$port" --bytes "$VICTIM_BYTES" \
			--max-size 256K --depth 8 --seed "$((seed + n))" \
			--timeout 60 >"$dir/icli.$n" 2>&1
		echo $? >"$dir/icli.$n.rc"
		wait "$srv"
		echo $? >"$dir/isrv.$n.rc"
		n=$((n + 1))
		[ -e "$dir/stop" ] && break
	done
}
victim_device_up() {
	t "install sroce.ko for modprobe, rdma link add sroce0, port active" \
		setup_rdma sroce
	t "modprobe rdma_ucm" modprobe rdma_ucm
	if VICTIM_GI=$(gid_index sroce0 v4); then
		ok "RoCE v2 GID of $MY_V4 on sroce0"
	else
		not_ok "RoCE v2 GID of $MY_V4 on sroce0"
	fi
}
victim_start() {
	VICTIM_DIR=$1
	rm -f "$VICTIM_DIR/stop"
	victim_loop "$VICTIM_DIR" "$2" &
	VICTIM_PID=$!
}
victim_verdict() {
	local dir=$VICTIM_DIR runs=0 bad='' f l i
	# Each run is bounded by its --timeout: the last ends within 130 s.
	touch "$dir/stop"
	if ! gone 130 "$VICTIM_PID"; then
		not_ok "victim runs end"
		pkill -9 -P "$VICTIM_PID"
		kill -9 "$VICTIM_PID"
	fi
	wait "$VICTIM_PID" 2>/dev/null
	for f in "$dir"/icli.*.rc "$dir"/isrv.*.rc; do
		[ -e "$f" ] || continue
		runs=$((runs + 1))
		l=${f%.rc}
		if [ "$(cat "$f")" != 0 ] || ! grep -q 'mismatches=0 errors=0' "$l"; then
			bad+=" ${l##*/}"
		fi
	done
	for ((i = 0; i < runs / 2; i++)); do
		grep -h '^integrity: ops=' "$dir/icli.$i" | sed "s/^/# victim $i: /"
	done
	if [ $runs -ge 2 ] && [ -z "$bad" ]; then
		ok "victim: $((runs / 2)) integrity runs clean (exit 0, mismatches=0 errors=0)"
	else
		not_ok "victim: integrity runs clean ($((runs / 2)) runs; bad:$bad)"
		for f in $bad; do
			echo "# $f:"
			tail -n 10 "$dir/$f" | sed 's/^/#   /'
		done
	fi
}
