#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check a capture of RoCEv2 traffic: every frame to or from UDP port 4791
decodes in tshark as InfiniBand (RoCEv2) with no malformed mark, every ICRC
follows the RoCEv2 rule, and each opcode named with --want was seen.

Usage: pcap-check.py PCAP [--want NAME,NAME...]
Prints one line per opcode seen and exits non-zero on any failure.
"""
import argparse
import collections
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from roce_pcap import icrc_ok, roce_packets  # noqa: E402

# IBTA opcode numbers (RC and UD) of what sroce sends.
NAMES = {
    0x00: 'RC SEND_FIRST', 0x01: 'RC SEND_MIDDLE', 0x02: 'RC SEND_LAST',
    0x03: 'RC SEND_LAST_IMM', 0x04: 'RC SEND_ONLY', 0x05: 'RC SEND_ONLY_IMM',
    0x06: 'RC WRITE_FIRST', 0x07: 'RC WRITE_MIDDLE', 0x08: 'RC WRITE_LAST',
    0x09: 'RC WRITE_LAST_IMM', 0x0a: 'RC WRITE_ONLY',
    0x0b: 'RC WRITE_ONLY_IMM', 0x0c: 'RC READ_REQUEST',
    0x0d: 'RC READ_RESPONSE_FIRST', 0x0e: 'RC READ_RESPONSE_MIDDLE',
    0x0f: 'RC READ_RESPONSE_LAST', 0x10: 'RC READ_RESPONSE_ONLY',
    0x11: 'RC ACKNOWLEDGE', 0x12: 'RC ATOMIC_ACKNOWLEDGE',
    0x13: 'RC COMPARE_SWAP', 0x14: 'RC FETCH_ADD', 0x1d: 'RC ATOMIC_WRITE',
    0x64: 'UD SEND_ONLY', 0x65: 'UD SEND_ONLY_IMM',
}


def payload_heuristics():
    """tshark's guesses at protocols above RDMA (RPC-over-RDMA, iSER, SMB
    Direct...): application payload that happens to look like one gets a
    malformed mark that says nothing about RoCEv2, so they are turned off."""
    def g(what):
        return subprocess.run(['tshark', '-G', what], capture_output=True,
                              text=True, check=False).stdout.splitlines()
    protos = {ln.split('\t')[2] for ln in g('protocols')
              if ln.count('\t') >= 2}
    off = set()
    for ln in g('heuristic-decodes'):
        f = ln.split('\t')
        # (not ethertype: Ethernet over IB shares the table)
        if len(f) >= 2 and f[0].startswith('infiniband.') and \
                f[1] in protos and f[1] != 'ethertype':
            off.add(f[1])
    return [a for name in sorted(off) for a in ('--disable-protocol', name)]


def tshark(pcap, *args):
    r = subprocess.run(['tshark', '-n', '-r', pcap] + payload_heuristics() +
                       list(args),
                       capture_output=True, text=True, check=False)
    if r.returncode:
        sys.exit('tshark failed: %s' % r.stderr.strip())
    return [ln for ln in r.stdout.splitlines() if ln]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('pcap')
    ap.add_argument('--want', default='',
                    help='comma-separated opcode names that must appear')
    a = ap.parse_args()
    failed = 0

    pkts = roce_packets(a.pcap)
    bad = [num for num, ip, v6, l4 in pkts if not icrc_ok(ip, v6, l4)]
    print('ICRC: %d of %d RoCEv2 frames follow the RoCEv2 rule%s'
          % (len(pkts) - len(bad), len(pkts),
             '' if not bad else ' (bad: frames %s)' % bad[:10]))
    if bad or not pkts:
        failed += 1

    # tshark decodes UDP 4791 as RoCEv2 by default.
    rows = tshark(a.pcap, '-Y', 'udp.port == 4791', '-T', 'fields',
                  '-e', 'frame.number', '-e', 'frame.protocols',
                  '-e', 'infiniband.bth.opcode', '-e', '_ws.malformed')
    seen = collections.Counter()
    undecoded = []
    guessed = []
    for row in rows:
        f = (row.split('\t') + [''] * 4)[:4]
        protos = f[1].split(':')
        malformed = bool(f[3]) or '_ws.malformed' in protos
        # A malformed mark raised by a dissector tshark handed the payload
        # to (its Ethernet-over-IB guess cannot be turned off alone, and
        # two payload bytes may look like an ethertype) is about the
        # application's bytes, not RoCEv2: counted, shown, not failed.
        above = [p for p in protos[protos.index('infiniband') + 1:]
                 if p != '_ws.malformed'] if 'infiniband' in protos else []
        if 'infiniband' not in protos or (malformed and not above):
            undecoded.append(f[0])
            continue
        if malformed:
            guessed.append('%s (%s)' % (f[0], ':'.join(above)))
        op = int(f[2], 0)
        seen[NAMES.get(op, 'opcode 0x%02x' % op)] += 1
    print('tshark: %d of %d UDP 4791 frames decode as RoCEv2 without a '
          'malformed mark%s' % (len(rows) - len(undecoded), len(rows),
                                '' if not undecoded else
                                ' (not: frames %s)' % undecoded[:10]))
    if guessed:
        print('tshark: %d frame(s) whose payload tshark took for another '
              'protocol and found malformed, not counted: %s'
              % (len(guessed), ', '.join(guessed[:10])))
    if undecoded or len(rows) != len(pkts):
        failed += 1
    if len(rows) != len(pkts):
        print('tshark saw %d UDP 4791 frames, the pcap reader %d'
              % (len(rows), len(pkts)))
    for name, n in sorted(seen.items()):
        print('  %-26s %d' % (name, n))
    for name in filter(None, a.want.split(',')):
        if not seen[name]:
            print('no %s frame in the capture' % name)
            failed += 1
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
