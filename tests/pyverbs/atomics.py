#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""RC atomics between RC QPs of one device, through the stock rxe provider:
CMP_AND_SWP and FETCH_AND_ADD results (the value before, in the local
buffer, and the remote word after), ordering of pipelined atomics, atomicity
of atomics from two QPs on one word, ATOMIC WRITE (IBTA 1.5) through the
extended QP API, and the error statuses: misaligned address, no
REMOTE_ATOMIC on the MR or on the QP, short local buffer (the last and a
misaligned address the rxe provider refuses at post time).

usage: atomics.py DEV --ip A.B.C.D

Replay of a retransmitted atomic (executed once) needs lost packets and is
checked between two guests (tests/guest/atomics.sh with netem).
"""
import errno
import struct
import sys

from pyverbs.pyverbs_error import PyverbsError, PyverbsRDMAError
from pyverbs.wr import SendWR
from sroce_lib import (ExSide, LW, PAGE, Pair, RR, RW, Region, SIG, ST, Side,
                       after_error, case, check, cleanup, connect, e, expect,
                       filled_mr, post_recv, sge, start, wc_str)


RA = e.IBV_ACCESS_REMOTE_ATOMIC
ALL = LW | RW | RR | RA


def u64(b):
    return struct.unpack('<Q', b)[0]


def atomic_wr(wr_id, opcode, lsge, rkey, raddr, compare_add, swap=0,
              flags=SIG):
    wr = SendWR(wr_id=wr_id, opcode=opcode, num_sge=1, sg=[lsge],
                send_flags=flags)
    wr.set_wr_atomic(rkey, raddr, compare_add, swap)
    return wr


class AFix:
    """A pair with remote-atomic rights on both sides, an 8-aligned word
    in b's MR and an 8-byte result slot in a's."""

    def __init__(self, env, b_access=ALL, mr_access=ALL, **kw):
        self.p = Pair(env, a_conn={'access': ALL},
                      b_conn={'access': b_access}, **kw)
        self.a, self.b = self.p.a, self.p.b
        self.tgt = Region(env, 3 * PAGE, mr_access, off=PAGE, length=PAGE,
                          seed=31)
        self.res, _ = filled_mr(env, 4096, LW, 32)

    def word(self, off=64):
        return u64(self.tgt.map[PAGE + off:PAGE + off + 8])

    def set_word(self, v, off=64):
        self.tgt.map[PAGE + off:PAGE + off + 8] = struct.pack('<Q', v)

    def result(self, off=0):
        return u64(self.res.read(8, off))

    def close(self):
        cleanup(self.p, [self.tgt.mr, self.res])


@case
def fetch_add_and_cas(env):
    t = 'A1 FETCH_AND_ADD'
    f = AFix(env)
    f.set_word(5)
    f.a.qp.post_send(atomic_wr(0xf1, e.IBV_WR_ATOMIC_FETCH_AND_ADD,
                               sge(f.res, 0, 8), f.tgt.mr.rkey,
                               f.tgt.addr(PAGE + 64), 3))
    w = expect(t + ': completes', f.a.scq, [(0xf1, e.IBV_WC_SUCCESS)])
    if w:
        check(w[0].opcode == e.IBV_WC_FETCH_ADD and w[0].byte_len == 8,
              t + ': wc opcode FETCH_ADD, byte_len 8', wc_str(w[0]))
    check(f.result() == 5, t + ': returns the value before', f.result())
    check(f.word() == 8, t + ': remote word 5 + 3', f.word())

    t = 'A2 FETCH_AND_ADD wraps'
    f.set_word(0xffffffffffffffff)
    f.a.qp.post_send(atomic_wr(0xf2, e.IBV_WR_ATOMIC_FETCH_AND_ADD,
                               sge(f.res, 8, 8), f.tgt.mr.rkey,
                               f.tgt.addr(PAGE + 64), 2))
    expect(t + ': completes', f.a.scq, [(0xf2, e.IBV_WC_SUCCESS)])
    check(f.result(8) == 0xffffffffffffffff and f.word() == 1,
          t + ': 2^64 - 1 + 2 = 1', '%#x, %#x' % (f.result(8), f.word()))

    t = 'A3 CMP_AND_SWP that matches'
    f.set_word(0x1122334455667788)
    f.a.qp.post_send(atomic_wr(0xc1, e.IBV_WR_ATOMIC_CMP_AND_SWP,
                               sge(f.res, 16, 8), f.tgt.mr.rkey,
                               f.tgt.addr(PAGE + 64), 0x1122334455667788,
                               0x0102030405060708))
    w = expect(t + ': completes', f.a.scq, [(0xc1, e.IBV_WC_SUCCESS)])
    if w:
        check(w[0].opcode == e.IBV_WC_COMP_SWAP, t + ': wc opcode COMP_SWAP',
              wc_str(w[0]))
    check(f.result(16) == 0x1122334455667788, t + ': returns the value before',
          '%#x' % f.result(16))
    check(f.word() == 0x0102030405060708, t + ': remote word swapped',
          '%#x' % f.word())

    t = 'A4 CMP_AND_SWP that does not match'
    f.a.qp.post_send(atomic_wr(0xc2, e.IBV_WR_ATOMIC_CMP_AND_SWP,
                               sge(f.res, 24, 8), f.tgt.mr.rkey,
                               f.tgt.addr(PAGE + 64), 0x99, 0x77))
    expect(t + ': completes', f.a.scq, [(0xc2, e.IBV_WC_SUCCESS)])
    check(f.result(24) == 0x0102030405060708, t + ': returns the value',
          '%#x' % f.result(24))
    check(f.word() == 0x0102030405060708, t + ': remote word unchanged',
          '%#x' % f.word())
    want = bytearray(f.tgt.data)
    want[PAGE + 64:PAGE + 72] = struct.pack('<Q', 0x0102030405060708)
    check(f.tgt.map[:] == bytes(want),
          'A1-A4: no other byte of the target touched')
    f.close()


@case
def pipelined(env):
    t = 'A5 64 FETCH_AND_ADDs posted at once'
    f = AFix(env, a_kw={'max_wr': 128})
    f.set_word(1000)
    n = 64
    for i in range(n):
        f.a.qp.post_send(atomic_wr(0x500 + i, e.IBV_WR_ATOMIC_FETCH_AND_ADD,
                                   sge(f.res, 8 * i, 8), f.tgt.mr.rkey,
                                   f.tgt.addr(PAGE + 64), 1))
    got = expect(t + ': all complete in order', f.a.scq,
                 [(0x500 + i, e.IBV_WC_SUCCESS) for i in range(n)])
    if got:
        res = [f.result(8 * i) for i in range(n)]
        check(res == list(range(1000, 1000 + n)),
              t + ': results 1000..1063 in posting order', res[:8])
    check(f.word() == 1000 + n, t + ': remote word 1064', f.word())
    f.close()


@case
def two_qps(env):
    t = 'A6 two QPs, 200 FETCH_AND_ADDs each, one word'
    f = AFix(env, a_kw={'max_wr': 64, 'sig_all': 0})
    g = Pair(env, a_kw={'max_wr': 64, 'sig_all': 0}, a_conn={'access': ALL},
             b_conn={'access': ALL})
    res2, _ = filled_mr(env, 4096, LW, 33)
    f.set_word(0)
    batch, n = 25, 200
    for k in range(n // batch):
        for i in range(batch):
            for side, r in ((f.a, f.res), (g.a, res2)):
                side.qp.post_send(atomic_wr(
                    i, e.IBV_WR_ATOMIC_FETCH_AND_ADD, sge(r, 8 * i, 8),
                    f.tgt.mr.rkey, f.tgt.addr(PAGE + 64), 1, flags=0))
        # A signalled one behind each batch (on another word) frees it.
        for side, r in ((f.a, f.res), (g.a, res2)):
            side.qp.post_send(atomic_wr(
                0x900 + k, e.IBV_WR_ATOMIC_FETCH_AND_ADD, sge(r, 2048, 8),
                f.tgt.mr.rkey, f.tgt.addr(PAGE + 72), 0))
        expect(t + ': batch %d on QP 1' % k, f.a.scq,
               [(0x900 + k, e.IBV_WC_SUCCESS)])
        expect(t + ': batch %d on QP 2' % k, g.a.scq,
               [(0x900 + k, e.IBV_WC_SUCCESS)])
    check(f.word() == 2 * n, t + ': remote word 400, no update lost',
          f.word())
    cleanup(g, [res2])
    f.close()


def refused_or_fails(t, f, wr, want):
    """The provider may refuse a WR at post time (EINVAL); if it posts it,
    it must complete with status want. Either way nothing is touched."""
    try:
        f.a.qp.post_send(wr)
    except PyverbsRDMAError as x:
        check(x.error_code == errno.EINVAL, t + ': refused at post (EINVAL)',
              'errno %d' % x.error_code)
    else:
        expect(t + ': ' + ST[want], f.a.scq, [(wr.wr_id, want)])
    check(f.tgt.untouched(), t + ': target untouched', f.tgt.diff())


@case
def errors(env):
    cases = (
        ('A8 MR without REMOTE_ATOMIC', {'mr_access': LW | RW | RR},
         e.IBV_WC_REM_ACCESS_ERR),
        ('A9 QP without REMOTE_ATOMIC', {'b_access': LW | RW | RR},
         e.IBV_WC_REM_ACCESS_ERR),
    )
    for t, kw, want in cases:
        for op, name in ((e.IBV_WR_ATOMIC_FETCH_AND_ADD, 'FETCH_AND_ADD'),
                         (e.IBV_WR_ATOMIC_CMP_AND_SWP, 'CMP_AND_SWP')):
            tt = '%s, %s' % (t, name)
            f = AFix(env, **kw)
            post_recv(f.b, 0xb1, [sge(f.res, 2048, 64)])
            f.a.qp.post_send(atomic_wr(0xe1, op, sge(f.res, 0, 8),
                                       f.tgt.mr.rkey, f.tgt.addr(PAGE + 64),
                                       f.word(64), 5))
            f.a.qp.post_send(atomic_wr(0xe2, op, sge(f.res, 8, 8),
                                       f.tgt.mr.rkey, f.tgt.addr(PAGE + 64),
                                       f.word(64), 5))
            after_error(tt, f.p, (0xe1, want), 0xb1,
                        [('target memory untouched', f.tgt.untouched,
                          f.tgt.diff)], (0xe2,))
            f.close()

    # The rxe provider refuses these at post; a requester that sends them
    # gets them refused by the responder (misaligned) or by the requester.
    t = 'A7 misaligned address'
    f = AFix(env)
    refused_or_fails(t, f, atomic_wr(0xe4, e.IBV_WR_ATOMIC_FETCH_AND_ADD,
                                     sge(f.res, 0, 8), f.tgt.mr.rkey,
                                     f.tgt.addr(PAGE + 68), 1),
                     e.IBV_WC_REM_INV_REQ_ERR)
    f.close()
    t = 'A10 FETCH_AND_ADD into a 4-byte local buffer'
    f = AFix(env)
    refused_or_fails(t, f, atomic_wr(0xe3, e.IBV_WR_ATOMIC_FETCH_AND_ADD,
                                     sge(f.res, 0, 4), f.tgt.mr.rkey,
                                     f.tgt.addr(PAGE + 64), 1),
                     e.IBV_WC_LOC_LEN_ERR)
    f.close()


def atomic_write(side, wr_id, rkey, addr, data):
    side.qp.wr_start()
    side.qp.wr_id = wr_id
    side.qp.wr_flags = SIG
    side.qp.wr_atomic_write(rkey, addr, data)
    side.qp.wr_complete()


@case
def atomic_write_case(env):
    t = 'A11 ATOMIC WRITE'
    try:
        a = ExSide(env, e.IBV_QP_EX_WITH_ATOMIC_WRITE |
                   e.IBV_QP_EX_WITH_RDMA_WRITE)
    except PyverbsError as x:
        check(False, t + ': extended QP with ATOMIC WRITE created', x)
        return
    b = Side(env)
    connect(env, a, b.qpn, 0x100, 0x200, access=ALL)
    connect(env, b, a.qpn, 0x200, 0x100, access=ALL)
    tgt = Region(env, 3 * PAGE, ALL, off=PAGE, length=PAGE, seed=41)
    atomic_write(a, 0xa71, tgt.mr.rkey, tgt.addr(PAGE + 128), b'sroce-AW')
    w = expect(t + ': completes', a.scq, [(0xa71, e.IBV_WC_SUCCESS)])
    if w:
        check(w[0].opcode == e.IBV_WC_ATOMIC_WRITE,
              t + ': wc opcode ATOMIC_WRITE', wc_str(w[0]))
    want = bytearray(tgt.data)
    want[PAGE + 128:PAGE + 136] = b'sroce-AW'
    check(tgt.map[:] == bytes(want), t + ': the 8 bytes, nothing else',
          '%s; at the address: %r' % (tgt.diff(),
                                      tgt.map[PAGE + 128:PAGE + 136]))
    # Without remote write on the MR: refused, nothing written.
    ro = Region(env, 3 * PAGE, LW | RR | RA, off=PAGE, length=PAGE, seed=42)
    post_recv(b, 0xb2, [sge(tgt.mr, 0, 64)])
    atomic_write(a, 0xa72, ro.mr.rkey, ro.addr(PAGE + 128), b'12345678')
    expect(t + ' into an MR without REMOTE_WRITE: REM_ACCESS_ERR', a.scq,
           [(0xa72, e.IBV_WC_REM_ACCESS_ERR)])
    check(ro.untouched(), t + ' into an MR without REMOTE_WRITE: untouched',
          ro.diff())
    for o in (a, b):
        o.close()
    for m in (tgt.mr, ro.mr):
        m.close()


def main():
    _, env, t0 = start()
    if not env:
        return 1
    da = env.ctx.query_device()
    check(da.atomic_caps == e.IBV_ATOMIC_GLOB,
          'device advertises atomic_cap ATOMIC_GLOB', da.atomic_caps)
    fetch_add_and_cas(env)
    pipelined(env)
    two_qps(env)
    errors(env)
    atomic_write_case(env)
    return env.finish('atomics.py', t0)


if __name__ == '__main__':
    sys.exit(main())
