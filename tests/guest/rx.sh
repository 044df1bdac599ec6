#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Two VMs: each creates sroce0, then sends the other RoCEv2-shaped UDP
# datagrams to port 4791 (well-formed BTHs and malformed ones, over IPv4 and
# IPv6) and checks that the receiver's counters saw exactly those.
set -u
. "$(dirname "$0")/lib.sh"

me=$SROCE_VM_INDEX
peer=$((1 - me))
sync_dir=$SROCE_SHARED/sync

# barrier NAME: wait (bounded) until both guests reached NAME.
barrier() {
	mkdir -p "$sync_dir"
	touch "$sync_dir/$1.$me"
	wait_for 120 test -e "$sync_dir/$1.$peer"
}

counter() {
	rdma statistic show link sroce0/1 | tr ' ' '\n' |
		awk -v k="$1" 'prev == k { print; exit } { prev = $0 }'
}

t "install sroce" install_sroce
t "rdma link add sroce0" rdma link add sroce0 type sroce netdev eth0
t "peer reachable over IPv4" wait_for 60 ping -c1 -W1 198.18.0.$((peer + 1))
t "peer reachable over IPv6" wait_for 60 ping -6 -c1 -W1 2001:2::$((peer + 1))
t "both guests ready" barrier ready

send() {
	"$PY" - "$@" <<'PYEOF'
import socket, struct, sys
addr, fam = sys.argv[1], socket.AF_INET6 if ':' in sys.argv[1] else socket.AF_INET
s = socket.socket(fam, socket.SOCK_DGRAM)
# RC SEND_ONLY to QP 0x11, PSN 7, 4 bytes of payload, then a zero ICRC.
good = struct.pack('>BBHII', 0x04, 0x40, 0xffff, 0x11, 0x80000007) + b'abcd' + bytes(4)
# Reserved opcode 0x15, and a BTH cut short.
bad = [struct.pack('>BBHII', 0x15, 0x40, 0xffff, 0x11, 7) + bytes(4), b'\x04\x40']
for _ in range(10):
    s.sendto(good, (addr, 4791))
for b in bad:
    s.sendto(b, (addr, 4791))
PYEOF
}

if [ "$me" -eq 0 ]; then
	t "send 24 datagrams to the peer" bash -c "$(declare -f send); PY=$PY; send 198.18.0.2 && send 2001:2::2"
	barrier sent
else
	barrier sent
	t "24 packets counted" wait_for 10 bash -c "$(declare -f counter); [ \"\$(counter rx_packets)\" = 24 ]"
	t "20 well-formed packets dropped for no QP" test "$(counter rx_drop_no_qp)" = 20
	t "4 malformed packets counted" test "$(counter rx_drop_malformed)" = 4
fi
barrier done
t "rdma link delete sroce0" rdma link delete sroce0
finish
