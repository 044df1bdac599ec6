#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Send hand-built RoCEv2 frames on an interface, for the receive tests.

send_roce.py IFACE SRC DST GOOD BAD_ICRC MALFORMED

Frames are built whole (Ethernet, IP, UDP, BTH, payload, ICRC) through an
AF_PACKET socket, so every byte the ICRC covers is known here: the ICRC is
computed independently of the kernel with zlib's CRC-32 and the RoCEv2
masking rules. GOOD frames carry a correct ICRC, BAD_ICRC frames a wrong
one, MALFORMED frames a reserved opcode or a BTH cut short. IPv6 frames
carry a zero UDP checksum, as rdma_rxe sends them. The destination MAC
comes from the neighbour table (ping the peer first).
"""
import ipaddress
import socket
import struct
import subprocess
import sys
import zlib


def csum16(b):
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def icrc(ip, v6):
    """RoCEv2 ICRC over IP header .. end of pad, as 4 little-endian bytes."""
    b = bytearray(ip)
    if v6:
        b[0] |= 0x0f
        b[1:4] = b'\xff\xff\xff'
        b[7] = 0xff
        ipl = 40
    else:
        b[1] = 0xff
        b[8] = 0xff
        b[10:12] = b'\xff\xff'
        ipl = 20
    b[ipl + 6:ipl + 8] = b'\xff\xff'
    if len(b) > ipl + 8 + 4:  # a cut-short BTH has no byte 4 to mask
        b[ipl + 8 + 4] = 0xff
    return struct.pack('<I', zlib.crc32(b'\xff' * 8 + bytes(b)) & 0xffffffff)


def frame(src, dst, smac, dmac, roce, good=True):
    v6 = src.version == 6
    udp_len = 8 + len(roce) + 4
    udp = struct.pack('!HHHH', 0xc001, 4791, udp_len, 0)
    if v6:
        ip = struct.pack('!IHBB', 0x60000000, udp_len, 17, 64) + \
            src.packed + dst.packed
        eth_type = 0x86dd
    else:
        hdr = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + udp_len, 0x1234,
                          0x4000, 64, 17, 0, src.packed, dst.packed)
        ip = hdr[:10] + struct.pack('!H', csum16(hdr)) + hdr[12:]
        eth_type = 0x0800
    pkt = ip + udp + roce
    crc = icrc(pkt, v6)
    if not good:
        crc = bytes(c ^ 0x5a for c in crc)
    return dmac + smac + struct.pack('!H', eth_type) + pkt + crc


def neigh_mac(dst):
    out = subprocess.run(['ip', 'neigh', 'show', str(dst)], check=True,
                         capture_output=True, text=True).stdout.split()
    return bytes.fromhex(out[out.index('lladdr') + 1].replace(':', ''))


def main():
    iface, src, dst = sys.argv[1], ipaddress.ip_address(sys.argv[2]), \
        ipaddress.ip_address(sys.argv[3])
    good, bad, malformed = (int(x) for x in sys.argv[4:7])
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    smac = s.getsockname()[4]
    dmac = neigh_mac(dst)
    # RC SEND_ONLY to QP 0x11, AckReq, 4 bytes of payload.
    bth = struct.pack('!BBHII', 0x04, 0x40, 0xffff, 0x11, 0x80000000)
    for psn in range(good):
        s.send(frame(src, dst, smac, dmac, bth[:8] +
                     struct.pack('!I', 0x80000000 | psn) + b'good'))
    for _ in range(bad):
        s.send(frame(src, dst, smac, dmac, bth + b'bad!', good=False))
    reserved = struct.pack('!BBHII', 0x15, 0x40, 0xffff, 0x11, 7)
    for i in range(malformed):
        s.send(frame(src, dst, smac, dmac,
                     reserved if i % 2 == 0 else bth[:2]))


if __name__ == '__main__':
    main()
