#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Regenerate drivers/sroce/tests/rxe_packets.h: RoCEv2 packets sent by the
# in-kernel rdma_rxe driver, with their ICRC, so that sroce's ICRC code can
# be checked against an implementation that is known to interoperate.
#
# Two guests (vm-run.sh) run tests/guest/capture-rxe.sh: ibv_rc_pingpong over
# rxe0, once with IPv4 and once with IPv6 GIDs, captured with tshark. Every
# captured packet's ICRC is then recomputed here from the RoCEv2 rule, and
# the header is written only if all of them match.
#
# Usage: make-icrc-fixture.sh [--out DIR] [--pcap FILE]
#   --out DIR    keep the guests' results in DIR (default: a temp dir)
#   --pcap FILE  skip the guests and use an earlier capture (classic pcap)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tree=$(dirname "$here")
header=$tree/drivers/sroce/tests/rxe_packets.h

usage() { sed -n 's/^# Usage: /usage: /p; s/^#   /  /p' "$0" >&2; exit 2; }
opt_out='' opt_pcap=''
while [ $# -gt 0 ]; do
	case $1 in
	--out | --pcap)
		[ $# -ge 2 ] || usage
		printf -v "opt_${1#--}" '%s' "$2"
		shift 2 ;;
	*) usage ;;
	esac
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ -n "$opt_pcap" ]; then
	pcap=$(realpath "$opt_pcap")
else
	out=${opt_out:-$tmp/run}
	start=$(date +%s)
	"$here/vm-run.sh" --kernel debian --vms 2 --out "$out" --timeout 600 \
		-- "$tree/tests/guest/run.sh" capture-rxe.sh || {
		trap - EXIT	# keep the logs of a failed capture
		echo "make-icrc-fixture: capture failed, see $out/vm*/{tap,console}.log" >&2
		exit 1
	}
	echo "make-icrc-fixture: capture took $(($(date +%s) - start))s"
	pcap=$out/vm0/rxe.pcap
fi

python3 - "$pcap" "$tmp/rxe_packets.h" <<'PYEOF'
import struct
import sys
import zlib

pcap_path, out_path = sys.argv[1], sys.argv[2]
ROCE_PORT = 4791
OPCODES = {0x04: 'RC SEND_ONLY', 0x11: 'RC ACKNOWLEDGE'}
# The fixture: the first packet of each of these kinds, in this order.
WANTED = [(False, 0x04), (False, 0x11), (True, 0x04), (True, 0x11)]


def read_pcap(path):
    """Yield (frame number, Ethernet frame) from a classic pcap file."""
    with open(path, 'rb') as f:
        data = f.read()
    magic = data[:4]
    if magic in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1'):
        end = '<'
    elif magic in (b'\xa1\xb2\xc3\xd4', b'\xa1\xb2\x3c\x4d'):
        end = '>'
    else:
        sys.exit('not a classic pcap file: %s' % path)
    linktype = struct.unpack(end + 'I', data[20:24])[0]
    if linktype != 1:
        sys.exit('pcap link type %d, expected 1 (Ethernet)' % linktype)
    off, num = 24, 0
    while off + 16 <= len(data):
        incl, orig = struct.unpack(end + 'II', data[off + 8:off + 16])
        off += 16
        num += 1
        if incl != orig:
            sys.exit('frame %d truncated by the capture' % num)
        yield num, data[off:off + incl]
        off += incl


def roce_packet(frame):
    """The IP packet of a RoCEv2 frame, cut to the IP length (dropping any
    Ethernet padding), and whether it is IPv6; None for anything else."""
    ethertype = struct.unpack('>H', frame[12:14])[0]
    ip = frame[14:]
    if ethertype == 0x0800 and ip[0] >> 4 == 4:
        ihl = (ip[0] & 0xf) * 4
        ip = ip[:struct.unpack('>H', ip[2:4])[0]]
        proto, l4 = ip[9], ihl
        ipv6 = False
    elif ethertype == 0x86dd and ip[0] >> 4 == 6:
        ip = ip[:40 + struct.unpack('>H', ip[4:6])[0]]
        proto, l4 = ip[6], 40
        ipv6 = True
    else:
        return None
    if proto != 17 or struct.unpack('>H', ip[l4 + 2:l4 + 4])[0] != ROCE_PORT:
        return None
    return ip, ipv6, l4


# The RoCEv2 ICRC rule; each flag turns one part of it off, so that a
# mismatch can be narrowed down to the rule that differs.
RULE_PARTS = [
    ('ff_prefix', '8 bytes of 0xff before the IP header'),
    ('ipv4_tos', 'IPv4 TOS masked to 0xff'),
    ('ipv4_ttl', 'IPv4 TTL masked to 0xff'),
    ('ipv4_csum', 'IPv4 header checksum masked to 0xffff'),
    ('ipv6_tc', 'IPv6 traffic class masked to 0xff'),
    ('ipv6_flow', 'IPv6 flow label masked to 0xfffff'),
    ('ipv6_hop', 'IPv6 hop limit masked to 0xff'),
    ('udp_csum', 'UDP checksum masked to 0xffff'),
    ('bth_resv', 'BTH byte 4 (FECN/BECN/reserved) masked to 0xff'),
]


def icrc(ip, ipv6, l4, off=()):
    b = bytearray(ip[:-4])
    if ipv6:
        if 'ipv6_tc' not in off:
            b[0] |= 0x0f
            b[1] |= 0xf0
        if 'ipv6_flow' not in off:
            b[1] |= 0x0f
            b[2:4] = b'\xff\xff'
        if 'ipv6_hop' not in off:
            b[7] = 0xff
    else:
        if 'ipv4_tos' not in off:
            b[1] = 0xff
        if 'ipv4_ttl' not in off:
            b[8] = 0xff
        if 'ipv4_csum' not in off:
            b[10:12] = b'\xff\xff'
    if 'udp_csum' not in off:
        b[l4 + 6:l4 + 8] = b'\xff\xff'
    if 'bth_resv' not in off:
        b[l4 + 8 + 4] = 0xff
    if 'ff_prefix' not in off:
        b[0:0] = b'\xff' * 8
    return zlib.crc32(bytes(b))


def diagnose(ip, ipv6, l4):
    """Which single change to the rule would have matched this packet."""
    le = struct.unpack('<I', ip[-4:])[0]
    be = struct.unpack('>I', ip[-4:])[0]
    hits = []
    variants = [((), 'the rule as is')]
    other = 'ipv4_' if ipv6 else 'ipv6_'
    variants += [((k,), 'without: ' + d) for k, d in RULE_PARTS
                 if not k.startswith(other)]
    for off, desc in variants:
        c = icrc(ip, ipv6, l4, off)
        if c == le:
            hits.append(desc + ', ICRC little-endian')
        if c == be:
            hits.append(desc + ', ICRC big-endian')
        if c ^ 0xffffffff in (le, be):
            hits.append(desc + ', ICRC not complemented')
    return hits or ['no single-rule change matches']


packets = []
for num, frame in read_pcap(pcap_path):
    r = roce_packet(frame)
    if r:
        packets.append((num,) + r)
if not packets:
    sys.exit('no RoCEv2 packets in %s' % pcap_path)

bad = 0
for num, ip, ipv6, l4 in packets:
    want = struct.unpack('<I', ip[-4:])[0]
    got = icrc(ip, ipv6, l4)
    if got != want:
        bad += 1
        print('frame %d (IPv%d, opcode 0x%02x, %d bytes): ICRC on the wire '
              '%08x, rule gives %08x' % (num, 6 if ipv6 else 4, ip[l4 + 8],
                                         len(ip), want, got))
        for h in diagnose(ip, ipv6, l4):
            print('    matches with ' + h)
print('ICRC: %d of %d captured RoCEv2 packets match the RoCEv2 rule'
      % (len(packets) - bad, len(packets)))
if bad:
    sys.exit('ICRC check failed; header not written')

chosen = []
for want_v6, opcode in WANTED:
    for num, ip, ipv6, l4 in packets:
        if ipv6 == want_v6 and ip[l4 + 8] == opcode:
            chosen.append((num, ip, ipv6, l4))
            break
    else:
        sys.exit('no IPv%d %s packet captured'
                 % (6 if want_v6 else 4, OPCODES[opcode]))


def describe(num, ip, ipv6, l4):
    bth = ip[l4 + 8:l4 + 20]
    qpn = struct.unpack('>I', bth[4:8])[0] & 0xffffff
    psn = struct.unpack('>I', bth[8:12])[0] & 0xffffff
    pad = (bth[1] >> 4) & 3
    # Payload: after BTH (and the AETH of an ACK) up to the pad and ICRC.
    hdrs = l4 + 8 + 12 + (4 if bth[0] == 0x11 else 0)
    return ('frame %d: QPN 0x%06x, PSN 0x%06x, %d payload bytes'
            % (num, qpn, psn, len(ip) - hdrs - pad - 4))


maxlen = max(len(c[1]) for c in chosen)
lines = [
    '/* SPDX-License-Identifier: GPL-2.0 */',
    '/*',
    ' * Generated by scripts/make-icrc-fixture.sh from a capture of rdma_rxe',
    ' * traffic (ibv_rc_pingpong between two QEMU guests); do not edit.',
    ' * Regenerate with scripts/make-icrc-fixture.sh, which also checks every',
    ' * captured ICRC against the RoCEv2 rule before writing this file. QPNs,',
    ' * PSNs and so the ICRCs change from one capture to the next.',
    ' *',
    ' * Each packet runs from the first byte of the IP header to the last byte',
    ' * of the ICRC, which is sent as a little-endian 32-bit value.',
    ' */',
    '#ifndef _SROCE_TESTS_RXE_PACKETS_H',
    '#define _SROCE_TESTS_RXE_PACKETS_H',
    '',
    '#include <linux/types.h>',
    '',
    '#define SROCE_RXE_PACKET_MAX %d' % maxlen,
    '',
    'static const struct {',
    '\tconst char *name;',
    '\tbool ipv6;',
    '\tunsigned int len;',
    '\tconst u8 bytes[SROCE_RXE_PACKET_MAX];',
    '} sroce_rxe_packets[] = {',
]
for num, ip, ipv6, l4 in chosen:
    name = 'IPv%d %s' % (6 if ipv6 else 4, OPCODES[ip[l4 + 8]])
    lines += [
        '\t/* %s */' % describe(num, ip, ipv6, l4),
        '\t{',
        '\t\t.name = "%s",' % name,
        '\t\t.ipv6 = %s,' % ('true' if ipv6 else 'false'),
        '\t\t.len = %d,' % len(ip),
        '\t\t.bytes = {',
    ]
    for i in range(0, len(ip), 8):
        lines.append('\t\t\t' + ' '.join('0x%02x,' % x for x in ip[i:i + 8]))
    lines += ['\t\t},', '\t},']
lines += ['};', '', '#endif /* _SROCE_TESTS_RXE_PACKETS_H */', '']
with open(out_path, 'w') as f:
    f.write('\n'.join(lines))
for c in chosen:
    print('chose IPv%d %s (opcode 0x%02x), %s, %d bytes IP to ICRC'
          % (6 if c[2] else 4, OPCODES[c[1][c[3] + 8]], c[1][c[3] + 8],
             describe(*c), len(c[1])))
PYEOF

mv "$tmp/rxe_packets.h" "$header"
echo "make-icrc-fixture: wrote ${header#"$tree"/}"
