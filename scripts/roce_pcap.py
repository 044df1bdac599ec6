# SPDX-License-Identifier: GPL-2.0
"""RoCEv2 packets in a classic pcap file, and the RoCEv2 ICRC rule.

Shared by scripts/make-icrc-fixture.sh (which turns rdma_rxe packets into a
KUnit fixture) and scripts/pcap-check.py (which checks a capture of sroce
traffic). Standard library only.
"""
import struct
import sys
import zlib

ROCE_PORT = 4791


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


def roce_packets(path):
    """[(frame number, IP packet, ipv6, offset of the UDP header)] of every
    RoCEv2 frame in a classic pcap file."""
    out = []
    for num, frame in read_pcap(path):
        r = roce_packet(frame)
        if r:
            out.append((num,) + r)
    return out


def icrc_ok(ip, ipv6, l4):
    """Whether the ICRC on the wire (little-endian) follows the rule."""
    return icrc(ip, ipv6, l4) == struct.unpack('<I', ip[-4:])[0]
