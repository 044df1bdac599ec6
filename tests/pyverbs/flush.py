#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""FLUSH (IBTA 1.5 memory placement) between RC QPs of one device, through
the stock rxe provider's ibv_wr_flush.

Where the kernel's ib_core knows the FLUSH rights (6.2 and later): the
device offers global flush and not persistence; a range flush and a
whole-region flush complete with IBV_WC_FLUSH after a WRITE whose bytes
are then in place; a persistent flush, a range outside the MR, an MR
without the right, a QP without it and an unknown key each complete with
the status rdma_rxe gives. On 6.1 the device offers no FLUSH and an MR
with the right is refused.

usage: flush.py DEV --ip A.B.C.D
"""
import errno

from pyverbs.mr import MR
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QPEx
from pyverbs.wr import SGE
from sroce_lib import (ExSide, LW, PAGE, RR, RW, Region, SIG, case, check,
                       comment, connect, e, expect, run, start, wc_str)


DEVICE_FLUSH_GLOBAL = 1 << 38
DEVICE_FLUSH_PERSISTENT = 1 << 39
FG = 1 << 8	# IBV_ACCESS_FLUSH_GLOBAL
FP = 1 << 9	# IBV_ACCESS_FLUSH_PERSISTENT
GLOBAL, PERSISTENT = 1, 2	# IBV_FLUSH_GLOBAL, IBV_FLUSH_PERSISTENT
RANGE, WHOLE_MR = 0, 1		# IBV_FLUSH_RANGE, IBV_FLUSH_MR


class FlushSide(ExSide):
    """An RC QP made through ibv_create_qp_ex with FLUSH and RDMA WRITE."""

    def __init__(self, env):
        super().__init__(env, e.IBV_QP_EX_WITH_FLUSH |
                         e.IBV_QP_EX_WITH_RDMA_WRITE)

    def flush(self, wr_id, rkey, addr, length, ptype=GLOBAL, level=RANGE):
        self.qp.wr_start()
        self.qp.wr_id = wr_id
        self.qp.wr_flags = SIG
        self.qp.wr_flush(rkey, addr, length, ptype, level)
        self.qp.wr_complete()

    def write(self, wr_id, rkey, addr, lkey, laddr, length):
        self.qp.wr_start()
        self.qp.wr_id = wr_id
        self.qp.wr_flags = SIG
        self.qp.wr_rdma_write(rkey, addr)
        self.qp.wr_set_sge(SGE(laddr, length, lkey))
        self.qp.wr_complete()


@case
def flush_cases(env):
    t = 'FLUSH'
    a = FlushSide(env)
    b = FlushSide(env)
    qp_all = LW | RW | RR | FG | FP
    connect(env, a, b.qpn, 0x100, 0x200, access=qp_all)
    connect(env, b, a.qpn, 0x200, 0x100, access=qp_all)
    tgt = Region(env, 3 * PAGE, LW | RW | FG, off=PAGE, length=PAGE, seed=51)
    src = Region(env, PAGE, LW, seed=52)

    # A WRITE, then a flush of its range: the bytes are there when the
    # flush completes, and nothing else changed.
    a.write(0xf1, tgt.mr.rkey, tgt.addr(PAGE + 100), src.mr.lkey,
            src.addr(0), 300)
    a.flush(0xf2, tgt.mr.rkey, tgt.addr(PAGE + 100), 300)
    w = expect(t + ' of a written range: WRITE and FLUSH complete', a.scq,
               [(0xf1, e.IBV_WC_SUCCESS), (0xf2, e.IBV_WC_SUCCESS)])
    if w:
        check(w[1].opcode == e.IBV_WC_FLUSH, t + ': wc opcode FLUSH',
              wc_str(w[1]))
    want = bytearray(tgt.data)
    want[PAGE + 100:PAGE + 400] = src.data[:300]
    check(tgt.map[:] == bytes(want), t + ': the written bytes in place',
          tgt.diff())

    # The whole region: the RETH's range is not looked at.
    a.flush(0xf3, tgt.mr.rkey, tgt.addr(PAGE), 0, level=WHOLE_MR)
    a.flush(0xf4, tgt.mr.rkey, 0, 12345678, level=WHOLE_MR)
    expect(t + ' of the whole MR (length 0 and beyond the MR) completes',
           a.scq, [(0xf3, e.IBV_WC_SUCCESS), (0xf4, e.IBV_WC_SUCCESS)])
    a.flush(0xf5, tgt.mr.rkey, tgt.addr(PAGE), PAGE)
    expect(t + ' of exactly the MR completes', a.scq,
           [(0xf5, e.IBV_WC_SUCCESS)])

    errs = [
        ('persistent on memory without persistence', tgt.mr.rkey,
         tgt.addr(PAGE), 8, PERSISTENT, RANGE),
        ('one byte past the MR', tgt.mr.rkey, tgt.addr(PAGE + 1), PAGE,
         GLOBAL, RANGE),
        ('an unknown key', tgt.mr.rkey ^ 0x5500, tgt.addr(PAGE), 8, GLOBAL,
         RANGE),
    ]
    plain = Region(env, PAGE, LW | RW, seed=53)
    errs.append(('an MR without FLUSH_GLOBAL', plain.mr.rkey, plain.addr(0),
                 8, GLOBAL, WHOLE_MR))
    for i, (what, rkey, addr, length, ptype, level) in enumerate(errs):
        p = FlushSide(env)
        q = FlushSide(env)
        connect(env, p, q.qpn, 0x300, 0x400, access=qp_all)
        connect(env, q, p.qpn, 0x400, 0x300, access=qp_all)
        p.flush(0xe0 + i, rkey, addr, length, ptype, level)
        expect('%s to %s: REM_ACCESS_ERR' % (t, what), p.scq,
               [(0xe0 + i, e.IBV_WC_REM_ACCESS_ERR)])
        p.close()
        q.close()
    check(tgt.map[:] == bytes(want) and plain.untouched(),
          t + ': refused flushes changed nothing', tgt.diff())

    # A responder QP not enabled for FLUSH refuses it as an invalid request.
    p = FlushSide(env)
    q = FlushSide(env)
    connect(env, p, q.qpn, 0x500, 0x600, access=qp_all)
    connect(env, q, p.qpn, 0x600, 0x500, access=LW | RW | RR)
    p.flush(0xd1, tgt.mr.rkey, tgt.addr(PAGE), 8)
    expect(t + ' to a QP without the FLUSH right: REM_INV_REQ_ERR', p.scq,
           [(0xd1, e.IBV_WC_REM_INV_REQ_ERR)])
    for o in (p, q, a, b):
        o.close()
    for m in (tgt.mr, src.mr, plain.mr):
        m.close()


def main():
    _, env, t0 = start()
    if not env:
        return 1
    caps = env.ctx.query_device_ex().device_cap_flags_ex
    try:
        MR(env.pd, PAGE, LW | RW | FG).close()
        mr_ok = True
    except PyverbsRDMAError as x:
        mr_ok = False
        mr_err = x
    try:
        MR(env.pd, PAGE, LW | RW | FP).close()
        check(False, 'an MR with FLUSH_PERSISTENT is refused')
    except PyverbsRDMAError as x:
        check(x.error_code in (errno.EINVAL, errno.EOPNOTSUPP),
              'an MR with FLUSH_PERSISTENT is refused', x)
    check(not caps & DEVICE_FLUSH_PERSISTENT,
          'device does not offer persistent FLUSH', hex(caps))
    if not mr_ok:
        # 6.1: ib_core has no FLUSH rights; the device must not offer it.
        check(not caps & DEVICE_FLUSH_GLOBAL,
              'ib_core without FLUSH rights: no FLUSH offered, MR refused',
              '%s; %s' % (hex(caps), mr_err))
        return env.finish('flush.py', t0)
    check(caps & DEVICE_FLUSH_GLOBAL, 'device offers global FLUSH',
          hex(caps))
    if not hasattr(QPEx, 'wr_flush'):
        comment('this pyverbs has no wr_flush (rdma-core < 45): '
                'FLUSH traffic is checked with a newer userland')
        return env.finish('flush.py', t0)
    flush_cases(env)
    return env.finish('flush.py', t0)


if __name__ == '__main__':
    run(main, 'flush.py')
