#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Inject forged requests and NAKs into another guest's live RC QPs.

spoof_live.py IFACE --src A.B.C.D --dst A.B.C.D --spoof A.B.C.D --qps FILE
              [--kernel]

FILE is `rdma -j resource show qp` as the victim guest printed it; every
RC QP in RTS there (of a kernel consumer, with no pid, when --kernel is
given) gets, built byte by byte with send_roce.py's frames (correct
ICRC):
  from --spoof, a third address on the subnet: a SEND, an RDMA WRITE and
    an RDMA READ request at the PSN the QP expects next, and an ACK
    carrying a NAK (remote access error) for the last PSN it sent;
  from --src, the QP's real peer: a SEND at the expected PSN whose BTH
    carries a P_Key that is not the default one.
The victim must drop all of them: the first four count in rx_drop_not_peer,
the last in rx_drop_pkey. Prints how many QPs were hit; exit 1 when none.
"""
import argparse
import ipaddress
import json
import os
import socket
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import send_roce	# noqa: E402 pylint: disable=wrong-import-position

SEND_ONLY, WRITE_ONLY, READ_REQ, ACK = 0x04, 0x0a, 0x0c, 0x11
NAK_ACC = 0x62
DEFAULT_PKEY, FOREIGN_PKEY = 0xffff, 0x8001
# A guess at an rkey and an address, as an attacker without either makes.
GUESS_VA, GUESS_RKEY = 0x10000, 0x00000101


def reth(va, rkey, length):
    return struct.pack('!QII', va, rkey, length)


def bth(op, qpn, psn, pkey=DEFAULT_PKEY, pad=0):
    # AckReq set on requests, as a requester would.
    return struct.pack('!BBHII', op, pad << 4, pkey, qpn,
                       (0x80000000 if op != ACK else 0) | psn)


def forged(qp):
    """(source, payload) of the five packets for one victim QP."""
    qpn, epsn = qp['lqpn'], qp['rq-psn']
    last = (qp['sq-psn'] - 1) & 0xffffff
    return [
        ('spoof', bth(SEND_ONLY, qpn, epsn) + bytes(range(64))),
        ('spoof', bth(WRITE_ONLY, qpn, epsn) + reth(GUESS_VA, GUESS_RKEY, 16)
         + b'spoofed WRITE!!!'),
        ('spoof', bth(READ_REQ, qpn, epsn) + reth(GUESS_VA, GUESS_RKEY, 4096)),
        ('spoof', bth(ACK, qpn, last) + struct.pack('!I', NAK_ACC << 24)),
        ('src', bth(SEND_ONLY, qpn, epsn, pkey=FOREIGN_PKEY) + b'foreign P_Key...'),
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('iface')
    ap.add_argument('--src', required=True)
    ap.add_argument('--dst', required=True)
    ap.add_argument('--spoof', required=True)
    ap.add_argument('--qps', required=True)
    ap.add_argument('--kernel', action='store_true')
    a = ap.parse_args()
    with open(a.qps) as f:
        qps = [q for q in json.load(f)
               if q.get('type') == 'RC' and q.get('state') == 'RTS'
               and not (a.kernel and 'pid' in q)]
    addr = {k: ipaddress.ip_address(getattr(a, k)) for k in ('src', 'spoof')}
    dst = ipaddress.ip_address(a.dst)
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((a.iface, 0))
    smac, dmac = s.getsockname()[4], send_roce.neigh_mac(dst)
    for qp in qps:
        for who, roce in forged(qp):
            # Unpaced: the link between the guests loses nothing
            # (vm-run.sh), and the victim's counters are checked to the
            # packet.
            s.send(send_roce.frame(addr[who], dst, smac, dmac, roce))
        print('# QP %d (%s): 4 forged from %s, 1 with P_Key %#x from %s'
              % (qp['lqpn'], qp.get('comm', '?'), a.spoof, FOREIGN_PKEY,
                 a.src))
    print('%d' % len(qps))
    return 0 if qps else 1


if __name__ == '__main__':
    sys.exit(main())
