#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""UD datagrams from one guest to the other, every one that arrives
checked: for integrity.sh's runs, clean and through netem.

  ud_stream.py receiver DEV --ip A.B.C.D --sync DIR
  ud_stream.py sender DEV --ip A.B.C.D --peer A.B.C.D --sync DIR
               [--count N]

The sender sends COUNT datagrams (default 3000) of 8 bytes to the path
MTU, every other one with immediate data; each carries its sequence
number and length and then a pattern of its own. It keeps at most WINDOW
of them ahead of what the receiver reported taking in, waiting at most
2 s for it, so that the receiver's RECVS receives are never all used up
by datagrams in flight. The receiver takes datagrams until the sender is
done and nothing came for 2 s. UD has no retransmission: under netem
some datagrams are lost and some arrive twice.

The QP numbers go through files in DIR; what the two say while the
datagrams flow (the receiver's count, the sender's total at the end)
goes over a TCP connection on the same link. Both times the sender hung
for good in CI (6.12, netem; no hung-task report, SIGTERM without
effect, testing.rst) it had stopped where it read the receiver's
progress file over 9p, a hundred times a second, while the other guest
renamed it. Checked on the receiver: every datagram that arrived
is one the sender sent, intact (length, pattern, immediate, source QP),
duplicates counted apart; every receive completion a success; more than
half the datagrams arrived (the path works at all).
"""
import os
import select
import socket
import struct
import sys
import time

from pyverbs.mr import MR
from pyverbs.wr import SGE

from fuzz_target import publish, wait_json

from sroce_lib import (Env, LW, UDSide, check, comment, e, gid_of, make_ah,
                       parse_args, pattern, poll, post_recv, status, ud_send)

GRH = 40
RECVS = 1024
WINDOW = 512
QKEY = 0x1a2b3c4d
PORT = 18790


class Lines:
    """The words of the lines a TCP peer sends, read without blocking."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = b''
        self.closed = False
        sock.setblocking(False)

    def read(self, secs=0.0):
        """The complete lines that arrived, waiting at most secs for one."""
        if not self.closed and select.select([self.sock], [], [], secs)[0]:
            try:
                data = self.sock.recv(4096)
            except BlockingIOError:
                data = None
            except OSError:
                data = b''
            if data == b'':
                self.closed = True
            elif data:
                self.buf += data
        *lines, self.buf = self.buf.split(b'\n')
        return [ln.decode().split() for ln in lines]

    def say(self, *words):
        """Send one line; a peer gone marks the connection closed (the
        checks that need its lines then fail by name)."""
        self.sock.setblocking(True)
        try:
            self.sock.sendall(
                (' '.join(str(w) for w in words) + '\n').encode())
        except OSError:
            self.closed = True
        self.sock.setblocking(False)


def size_of(seq, mtu):
    return 8 + (seq * 37) % (mtu - 7)


def body(seq, n):
    return struct.pack('>II', seq, n) + pattern(n - 8, seq & 0xff)


def receiver(a, env):
    mtu = 128 << env.port_mtu
    slot = GRH + mtu
    side = UDSide(env, qkey=QKEY, max_wr=RECVS, max_sge=1, cq_size=RECVS)
    mr = MR(env.pd, RECVS * slot, LW)
    for i in range(RECVS):
        post_recv(side, i, [SGE(mr.buf + i * slot, slot, mr.lkey)])
    lsock = socket.create_server((a.ip, PORT))
    lsock.settimeout(300)
    publish(os.path.join(a.sync, 'ud-receiver.json'),
            dict(qpn=side.qpn, gid=env.gid))
    snd = wait_json(os.path.join(a.sync, 'ud-sender.json'),
                    'ud receiver: the sender published its QP')
    if snd is None:
        return 1
    try:
        peer = Lines(lsock.accept()[0])
    except OSError as err:
        check(False, 'ud receiver: the sender connected', str(err))
        return 1
    lsock.close()
    seen, dups, bad, errs = set(), 0, [], []
    got = published = 0
    last = time.monotonic()
    done = None
    while True:
        wcs = poll(side.rcq, 64, 0.0)
        for wc in wcs:
            i = wc.wr_id
            if wc.status != e.IBV_WC_SUCCESS:
                errs.append('wr %d status %d' % (i, wc.status))
            else:
                got += 1
                buf = mr.read(wc.byte_len, i * slot)
                seq, n = struct.unpack('>II', buf[GRH:GRH + 8]) \
                    if wc.byte_len >= GRH + 8 else (None, None)
                imm = bool(wc.wc_flags & e.IBV_WC_WITH_IMM)
                if (seq is None or n != wc.byte_len - GRH or
                        n != size_of(seq, mtu) or
                        buf[GRH:] != body(seq, n) or
                        wc.src_qp != snd['qpn'] or imm != bool(seq & 1) or
                        (imm and wc.imm_data != seq)):
                    bad.append('wr %d: %d bytes, seq %s' % (
                        i, wc.byte_len, seq))
                elif seq in seen:
                    dups += 1
                else:
                    seen.add(seq)
            post_recv(side, i, [SGE(mr.buf + i * slot, slot, mr.lkey)])
        if wcs:
            last = time.monotonic()
            if got - published >= 64:
                peer.say('got', got)
                published = got
            continue
        for w in peer.read(0.001):
            if w[:1] == ['done']:
                done = int(w[1])
        # (a sender gone without its total fails the check below)
        if ((done is not None or peer.closed) and
                time.monotonic() - last > 2.0):
            break
        if time.monotonic() - last > 600:
            break
    sent = done or 0
    comment('ud receiver: %d datagrams sent, %d arrived (%d distinct, %d '
            'duplicates), %d lost' % (sent, got, len(seen), dups,
                                      sent - len(seen)))
    check(done is not None, 'ud receiver: the sender finished')
    check(not bad, 'ud receiver: every datagram that arrived intact '
          '(length, pattern, immediate, source QP)', '; '.join(bad[:5]))
    check(not errs, 'ud receiver: every receive completion a success',
          '; '.join(errs[:5]))
    check(all(0 <= s < sent for s in seen), 'ud receiver: only datagrams '
          'the sender sent')
    check(len(seen) * 2 > sent, 'ud receiver: more than half the %d '
          'datagrams arrived (%d)' % (sent, len(seen)))
    peer.sock.close()
    side.close()
    mr.close()
    return status()


def sender(a, env):
    mtu = 128 << env.port_mtu
    side = UDSide(env, qkey=QKEY, max_wr=64, max_sge=1)
    mr = MR(env.pd, mtu, LW)
    rcv = wait_json(os.path.join(a.sync, 'ud-receiver.json'),
                    'ud sender: the receiver published its QP')
    if rcv is None:
        return 1
    publish(os.path.join(a.sync, 'ud-sender.json'), dict(qpn=side.qpn))
    try:
        peer = Lines(socket.create_connection((a.peer, PORT), timeout=300))
    except OSError as err:
        check(False, 'ud sender: connected to the receiver', str(err))
        return 1
    ah = make_ah(env, gid_of(a.peer), env.gid_index)
    errs, waited, got = [], 0, 0
    for seq in range(a.count):
        n = size_of(seq, mtu)
        mr.write(body(seq, n), n)
        ud_send(side, seq, [SGE(mr.buf, n, mr.lkey)], ah, rcv['qpn'],
                qkey=QKEY, imm=seq if seq & 1 else None)
        # One at a time: the next datagram reuses the buffer.
        wcs = poll(side.scq, 1, 10.0)
        if [wc.status for wc in wcs] != [e.IBV_WC_SUCCESS]:
            errs.append('seq %d: %s' % (seq, [wc.status for wc in wcs]))
            break
        if seq % 64 == 63:
            end = time.monotonic() + 2.0
            while True:
                for w in peer.read(0.01):
                    if w[:1] == ['got']:
                        got = max(got, int(w[1]))
                if got >= seq + 1 - WINDOW:
                    break
                if time.monotonic() >= end:
                    waited += 1
                    break
    peer.say('done', seq + 1)
    comment('ud sender: %d datagrams sent; %d times the receiver had not '
            'caught up within 2 s' % (seq + 1, waited))
    check(not errs, 'ud sender: %d datagrams, every send completion a '
          'success' % a.count, '; '.join(errs))
    # The receiver closes first, once it has the total: closing with its
    # reports unread would reset the connection, the total perhaps lost.
    end = time.monotonic() + 60
    while not peer.closed and time.monotonic() < end:
        peer.read(1.0)
    peer.sock.close()
    ah.close()
    side.close()
    mr.close()
    return status()


def main():
    a = parse_args(('--peer', {}), ('--sync', {'required': True}),
                   ('--count', {'type': int, 'default': 3000}),
                   roles=('sender', 'receiver'))
    env = Env(a.dev, a.ip)
    check(env.gid_index is not None, 'ud %s: IPv4 RoCE v2 GID found' %
          a.role)
    if env.gid_index is None:
        return 1
    return receiver(a, env) if a.role == 'receiver' else sender(a, env)


if __name__ == '__main__':
    sys.stdout.reconfigure(line_buffering=True)
    sys.exit(main())
