#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Memory windows of types 1 and 2, between RC (and UC) QPs of one device
talking to each other, through the stock rxe provider.

usage: mw.py DEV --ip A.B.C.D

The target MR is registered with LOCAL_WRITE | MW_BIND only, so every remote
access that succeeds was granted by a window. Checked: the caps; binds (type
1 through ibv_bind_mw, type 2 through a BIND_MW send WR) and their
completions; WRITE, READ and FETCH_AND_ADD through a window's rkey, with the
bytes; every refusal of a remote access (outside the window, a right it
does not grant, a stale key, the MR's own key, a type 2 window used over
another QP, after unbind, LOCAL_INV, SEND_WITH_INV or dealloc) as
REM_ACCESS_ERR with the memory untouched; every bind the rules forbid as
MW_BIND_ERR; invalidations that must fail; an MR with a bound window
refusing deregistration; a window's rkey refused as an lkey; a UC bind;
a type 2 window freed by its QP's destruction; a process that dies with
windows bound.
"""
import errno
import os
import subprocess
import sys
import time

from pyverbs.mr import MW, MWBind, MWBindInfo
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.wr import SGE, SendWR
from sroce_lib import closeall as lib_closeall
from sroce_lib import (LW, PAGE, Pair, RR, RW, Region, SIG, UCSide, case,
                       check, comment, e, expect, filled_mr, mk_send,
                       post_recv, sge, start, state_check, uc_connect, wc_str)


RA = e.IBV_ACCESS_REMOTE_ATOMIC
BIND = e.IBV_ACCESS_MW_BIND
ALL_QP = LW | RW | RR | RA
T1, T2 = e.IBV_MW_TYPE_1, e.IBV_MW_TYPE_2
OK = e.IBV_WC_SUCCESS
RAE = e.IBV_WC_REM_ACCESS_ERR


def bind1(side, mw, mr, addr, length, access, wr_id):
    """Type 1: ibv_bind_mw (the provider posts a BIND_MW WQE)."""
    side.qp.bind_mw(mw, MWBind(MWBindInfo(mr, addr, length, access), SIG,
                               wr_id))


def bind2(side, mw, mr, addr, length, access, wr_id):
    """Type 2: a BIND_MW send WR; returns the rkey it gives the window."""
    wr = SendWR(wr_id=wr_id, opcode=e.IBV_WR_BIND_MW, num_sge=0,
                send_flags=SIG)
    wr.set_bind_wr(mw, MWBindInfo(mr, addr, length, access))
    side.qp.post_send(wr)
    return wr.rkey


def bound_ok(t, side, wr_id, opcode=e.IBV_WC_BIND_MW):
    got = expect(t, side.scq, [(wr_id, OK)])
    if got:
        check(got[0].opcode == opcode, t + ': completion opcode',
              wc_str(got[0]))


def rdma(side, wr_id, opcode, buf, off, length, rkey, raddr):
    side.qp.post_send(mk_send(wr_id, opcode, [sge(buf, off, length)],
                              rkey=rkey, raddr=raddr))


def fetch_add(side, wr_id, buf, rkey, raddr, add):
    wr = SendWR(wr_id=wr_id, opcode=e.IBV_WR_ATOMIC_FETCH_AND_ADD,
                num_sge=1, sg=[sge(buf, 0, 8)], send_flags=SIG)
    wr.set_wr_atomic(rkey, raddr, add, 0)
    side.qp.post_send(wr)


def target(env, seed):
    """4 pages, the MR over all of them with no remote right of its own."""
    return Region(env, 4 * PAGE, LW | BIND, seed=seed)


def fixture(env, seed):
    """A pair whose responder grants every right, a target (seed) and a
    local page filled with a pattern (seed + 1)."""
    p = Pair(env, b_conn={'access': ALL_QP})
    tgt = target(env, seed)
    la, _ = filled_mr(env, PAGE, LW, seed + 1)
    return p, tgt, la


def closeall(*objs):
    """Close each of objs in turn; a failed destroy (an RDMA error) is
    passed over."""
    lib_closeall(*objs, ignore=PyverbsRDMAError)


@case
def caps(env):
    a = env.ctx.query_device()
    check(a.max_mw == 65536, 'M0 caps: max_mw 65536', str(a.max_mw))
    want = e.IBV_DEVICE_MEM_WINDOW | e.IBV_DEVICE_MEM_WINDOW_TYPE_2B
    check(a.device_cap_flags & want == want,
          'M0 caps: MEM_WINDOW and MEM_WINDOW_TYPE_2B',
          '%#x' % a.device_cap_flags)


@case
def type1(env):
    t = 'M1 type 1'
    p, tgt, la = fixture(env, 31)
    mw = MW(env.pd, T1)
    old = mw.rkey
    check(old >> 8 != tgt.mr.rkey >> 8 and old >> 8 >= 0x800000,
          t + ': a window key, apart from MR keys',
          'mw %#x mr %#x' % (old, tgt.mr.rkey))
    bind1(p.b, mw, tgt.mr, tgt.addr(PAGE), 2 * PAGE, RW | RR | RA, 0xb0)
    bound_ok(t + ': ibv_bind_mw completes', p.b, 0xb0)
    check(mw.rkey != old and mw.rkey >> 8 == old >> 8,
          t + ': the bind changed the key byte only',
          '%#x -> %#x' % (old, mw.rkey))
    rdma(p.a, 0xa1, e.IBV_WR_RDMA_WRITE, la, 0, 256, mw.rkey,
         tgt.addr(PAGE + 100))
    expect(t + ': WRITE through the window', p.a.scq, [(0xa1, OK)])
    want = bytearray(tgt.data)
    want[PAGE + 100:PAGE + 356] = la.read(256, 0)
    check(tgt.map[:] == bytes(want), t + ': the bytes landed, no others',
          tgt.diff())
    rdma(p.a, 0xa2, e.IBV_WR_RDMA_READ, la, 512, 300, mw.rkey,
         tgt.addr(3 * PAGE - 300))
    expect(t + ': READ through the window, to its last byte', p.a.scq,
           [(0xa2, OK)])
    check(la.read(300, 512) == tgt.map[3 * PAGE - 300:3 * PAGE],
          t + ': READ returned the window\'s bytes')
    before = int.from_bytes(tgt.map[2 * PAGE:2 * PAGE + 8], 'little')
    fetch_add(p.a, 0xa3, la, mw.rkey, tgt.addr(2 * PAGE), 5)
    expect(t + ': FETCH_AND_ADD through the window', p.a.scq, [(0xa3, OK)])
    after = int.from_bytes(tgt.map[2 * PAGE:2 * PAGE + 8], 'little')
    got = int.from_bytes(la.read(8, 0), 'little')
    check(got == before and after == (before + 5) % (1 << 64),
          t + ': FETCH_AND_ADD result and memory',
          'got %#x before %#x after %#x' % (got, before, after))
    # Bound again elsewhere: the new range works, the key changed again.
    key2 = mw.rkey
    bind1(p.b, mw, tgt.mr, tgt.addr(0), PAGE, RW, 0xb1)
    bound_ok(t + ': bound again while bound', p.b, 0xb1)
    rdma(p.a, 0xa4, e.IBV_WR_RDMA_WRITE, la, 0, 64, mw.rkey, tgt.addr(8))
    expect(t + ': WRITE in the new range', p.a.scq, [(0xa4, OK)])
    check(mw.rkey != key2, t + ': a new key byte per bind',
          '%#x' % mw.rkey)
    # Unbound with a zero-length bind: the key is refused from then on.
    snap = tgt.map[:]
    bind1(p.b, mw, tgt.mr, tgt.addr(0), 0, 0, 0xb2)
    bound_ok(t + ': zero-length bind (unbind) completes', p.b, 0xb2)
    rdma(p.a, 0xa5, e.IBV_WR_RDMA_WRITE, la, 0, 64, mw.rkey, tgt.addr(8))
    expect(t + ': WRITE after unbind: REM_ACCESS_ERR', p.a.scq, [(0xa5, RAE)])
    check(tgt.map[:] == snap, t + ': memory untouched after unbind')
    closeall(mw, p, tgt.mr, la)


@case
def type2(env):
    t = 'M2 type 2'
    p, tgt, la = fixture(env, 41)
    rv, _ = filled_mr(env, PAGE, LW, 43)
    mw = MW(env.pd, T2)
    # LOCAL_WRITE means nothing for a window; rdma-core's tests pass it.
    rkey = bind2(p.b, mw, tgt.mr, tgt.addr(PAGE), PAGE, RW | RR | RA | LW,
                 0xb0)
    bound_ok(t + ': BIND_MW WR completes (LOCAL_WRITE ignored)', p.b, 0xb0)
    comment('%s: MW %#x bound as %#x' % (t, mw.rkey, rkey))
    rdma(p.a, 0xa1, e.IBV_WR_RDMA_WRITE, la, 0, PAGE, rkey, tgt.addr(PAGE))
    expect(t + ': WRITE of the whole window', p.a.scq, [(0xa1, OK)])
    check(tgt.map[PAGE:2 * PAGE] == la.read(PAGE, 0),
          t + ': the bytes landed')
    rdma(p.a, 0xa2, e.IBV_WR_RDMA_READ, rv, 0, 128, rkey, tgt.addr(PAGE))
    expect(t + ': READ through the window', p.a.scq, [(0xa2, OK)])
    check(rv.read(128, 0) == la.read(128, 0), t + ': READ data')
    # Remote invalidation over the QP it is bound to.
    post_recv(p.b, 0xb1, [sge(rv, 0, 64)])
    wr = mk_send(0xa3, e.IBV_WR_SEND_WITH_INV, [sge(la, 0, 16)])
    wr.imm_data = rkey
    p.a.qp.post_send(wr)
    expect(t + ': SEND_WITH_INV completes', p.a.scq, [(0xa3, OK)])
    got = expect(t + ': its receive completes', p.b.rcq, [(0xb1, OK)])
    if got:
        check(got[0].wc_flags & e.IBV_WC_WITH_INV and
              got[0].imm_data == rkey,
              t + ': receive carries WITH_INV and the invalidated rkey',
              wc_str(got[0]))
    snap = tgt.map[:]
    rdma(p.a, 0xa4, e.IBV_WR_RDMA_WRITE, la, 0, 64, rkey, tgt.addr(PAGE))
    expect(t + ': WRITE after SEND_WITH_INV: REM_ACCESS_ERR', p.a.scq,
           [(0xa4, RAE)])
    check(tgt.map[:] == snap, t + ': memory untouched')
    closeall(mw, p)

    # Local invalidation, then a bind again (the stale key in the ibv_mw).
    p = Pair(env, b_conn={'access': ALL_QP})
    mw = MW(env.pd, T2)
    rkey = bind2(p.b, mw, tgt.mr, tgt.addr(0), 2 * PAGE, RW, 0xb0)
    bound_ok(t + ': bound', p.b, 0xb0)
    wr = mk_send(0xb1, e.IBV_WR_LOCAL_INV, [])
    wr.imm_data = rkey
    p.b.qp.post_send(wr)
    bound_ok(t + ': LOCAL_INV completes', p.b, 0xb1, e.IBV_WC_LOCAL_INV)
    rkey2 = bind2(p.b, mw, tgt.mr, tgt.addr(0), 2 * PAGE, RW, 0xb2)
    bound_ok(t + ': bound again after LOCAL_INV', p.b, 0xb2)
    rdma(p.a, 0xa1, e.IBV_WR_RDMA_WRITE, la, 0, 32, rkey2, tgt.addr(0))
    expect(t + ': WRITE with the new key', p.a.scq, [(0xa1, OK)])
    check(tgt.map[0:32] == la.read(32, 0), t + ': the bytes landed')
    comment('%s: keys %#x then %#x' % (t, rkey, rkey2))
    # Deregistering the MR is refused while the window is bound.
    try:
        tgt.mr.close()
        check(False, t + ': dereg of an MR with a bound window fails EBUSY',
              'dereg succeeded')
    except PyverbsRDMAError as x:
        check(x.error_code == errno.EBUSY,
              t + ': dereg of an MR with a bound window fails EBUSY',
              'errno %d' % x.error_code)
    wr = mk_send(0xb3, e.IBV_WR_LOCAL_INV, [])
    wr.imm_data = rkey2
    p.b.qp.post_send(wr)
    bound_ok(t + ': LOCAL_INV', p.b, 0xb3, e.IBV_WC_LOCAL_INV)
    try:
        tgt.mr.close()
        check(True, t + ': dereg after the invalidation succeeds')
    except PyverbsRDMAError as x:
        check(False, t + ': dereg after the invalidation succeeds',
              'errno %d' % x.error_code)
    closeall(mw, p, la, rv)


def refused(env, t, mw_type, access, rkey_of, raddr_of, opcode, length=64,
            after=None, other_qp=False):
    """A remote access a window must refuse: REM_ACCESS_ERR on the
    requester, both QPs to ERR, the whole target untouched. The window is
    bound at [PAGE, 3 * PAGE) with access; after(p, mw, rkey) runs between
    the bind and the access; with other_qp the access comes over another
    pair of the same PD."""
    p, tgt, la = fixture(env, 51)
    mw = MW(env.pd, mw_type)
    old = mw.rkey
    if mw_type == T1:
        bind1(p.b, mw, tgt.mr, tgt.addr(PAGE), 2 * PAGE, access, 0xb0)
        rkey = mw.rkey
    else:
        rkey = bind2(p.b, mw, tgt.mr, tgt.addr(PAGE), 2 * PAGE, access,
                     0xb0)
    expect(t + ': bind', p.b.scq, [(0xb0, OK)])
    if after:
        after(p, mw, rkey)
    snap = tgt.map[:]
    q = Pair(env, b_conn={'access': ALL_QP}) if other_qp else p
    key = rkey_of(tgt, old, rkey)
    if opcode == e.IBV_WR_ATOMIC_FETCH_AND_ADD:
        fetch_add(q.a, 0xa1, la, key, raddr_of(tgt), 1)
    else:
        rdma(q.a, 0xa1, opcode, la, 0, length, key, raddr_of(tgt))
    expect(t + ': REM_ACCESS_ERR', q.a.scq, [(0xa1, RAE)])
    state_check(t + ': requester QP in ERR', q.a, e.IBV_QPS_ERR)
    check(tgt.map[:] == snap, t + ': target memory untouched', tgt.diff())
    closeall(mw, p)
    if other_qp:
        q.close()
    closeall(tgt.mr, la)


def inside(tgt):
    return tgt.addr(PAGE + 64)


def win_key(tgt, old, rkey):
    return rkey


@case
def refusals(env):
    W, R, A = e.IBV_WR_RDMA_WRITE, e.IBV_WR_RDMA_READ, \
        e.IBV_WR_ATOMIC_FETCH_AND_ADD
    for ty, n in ((T1, '1'), (T2, '2')):
        t = 'M3 type %s: ' % n
        refused(env, t + 'WRITE running past the window\'s end', ty, RW | RR,
                win_key, lambda r: r.addr(3 * PAGE - 32), W)
        refused(env, t + 'WRITE starting before the window (inside the MR)',
                ty, RW | RR, win_key, lambda r: r.addr(PAGE - 16), W)
        refused(env, t + 'WRITE through a read-only window', ty, RR,
                win_key, inside, W)
        refused(env, t + 'READ through a write-only window', ty, RW,
                win_key, inside, R)
        refused(env, t + 'FETCH_AND_ADD through a window without atomics',
                ty, RW | RR, win_key, inside, A)
        refused(env, t + 'WRITE with the MR\'s own rkey', ty, RW | RR,
                lambda r, o, k: r.mr.rkey, inside, W)
        refused(env, t + 'WRITE with the window\'s key from before the bind',
                ty, RW | RR, lambda r, o, k: o, inside, W)
        refused(env, t + 'WRITE after dealloc', ty, RW | RR, win_key, inside,
                W, after=lambda p, mw, k: mw.close())
    t = 'M3 type 2: '
    refused(env, t + 'WRITE over a QP the window is not bound to', T2,
            RW | RR, win_key, inside, e.IBV_WR_RDMA_WRITE, other_qp=True)

    def local_inv(p, mw, rkey):
        wr = mk_send(0xb9, e.IBV_WR_LOCAL_INV, [])
        wr.imm_data = rkey
        p.b.qp.post_send(wr)
        expect(t + 'LOCAL_INV', p.b.scq, [(0xb9, OK)])
    refused(env, t + 'READ after LOCAL_INV', T2, RW | RR, win_key, inside,
            e.IBV_WR_RDMA_READ, after=local_inv)


def bind_refused(env, t, mw_type, mr_access, addr_of, length, access,
                 other_pd=False, twice=False):
    """A bind the rules forbid: MW_BIND_ERR on the binding QP, which goes
    to ERR; nothing was bound (the key is refused)."""
    p = Pair(env, b_conn={'access': ALL_QP})
    tgt = Region(env, 4 * PAGE, mr_access, seed=61)
    pd2 = PD(env.ctx) if other_pd else None
    mw = MW(pd2 or env.pd, mw_type)
    want = [(0xb0, e.IBV_WC_MW_BIND_ERR)]
    if twice:
        bind2(p.b, mw, tgt.mr, tgt.addr(0), PAGE, RW, 0xbf)
        expect(t + ': the first bind', p.b.scq, [(0xbf, OK)])
    try:
        if mw_type == T1:
            bind1(p.b, mw, tgt.mr, addr_of(tgt), length, access, 0xb0)
        else:
            bind2(p.b, mw, tgt.mr, addr_of(tgt), length, access, 0xb0)
    except PyverbsRDMAError as x:
        check(False, t + ': posted', 'errno %d' % x.error_code)
        want = []
    if want:
        expect(t + ': MW_BIND_ERR', p.b.scq, want)
        state_check(t + ': binding QP in ERR', p.b, e.IBV_QPS_ERR)
    closeall(mw, p, tgt.mr)
    if pd2:
        closeall(pd2)


@case
def bind_errors(env):
    for ty, n in ((T1, '1'), (T2, '2')):
        t = 'M4 type %s bind: ' % n
        bind_refused(env, t + 'MR without MW_BIND', ty, LW | RW | RR,
                     lambda r: r.addr(0), PAGE, RW)
        bind_refused(env, t + 'range past the MR\'s end', ty, LW | BIND,
                     lambda r: r.addr(3 * PAGE), PAGE + 1, RW)
        bind_refused(env, t + 'range before the MR', ty, LW | BIND,
                     lambda r: r.addr(0) - 8, 16, RR)
        bind_refused(env, t + 'remote write on an MR without LOCAL_WRITE',
                     ty, BIND, lambda r: r.addr(0), PAGE, RW)
        bind_refused(env, t + 'atomics on an MR without LOCAL_WRITE', ty,
                     BIND, lambda r: r.addr(0), PAGE, RA)
    t = 'M4 type 2 bind: '
    bind_refused(env, t + 'zero length', T2, LW | BIND, lambda r: r.addr(0),
                 0, RW)
    bind_refused(env, t + 'a window bound already', T2, LW | BIND,
                 lambda r: r.addr(0), PAGE, RW, twice=True)
    bind_refused(env, t + 'a window of another PD', T2, LW | BIND,
                 lambda r: r.addr(0), PAGE, RW, other_pd=True)
    bind_refused(env, t + 'zero-based', T2, LW | BIND, lambda r: r.addr(0),
                 PAGE, RW | e.IBV_ACCESS_ZERO_BASED)


@case
def inv_errors(env):
    t = 'M5 LOCAL_INV of a type 1 window'
    p, tgt, la = fixture(env, 71)
    mw = MW(env.pd, T1)
    bind1(p.b, mw, tgt.mr, tgt.addr(0), PAGE, RW, 0xb0)
    expect(t + ': bind', p.b.scq, [(0xb0, OK)])
    wr = mk_send(0xb1, e.IBV_WR_LOCAL_INV, [])
    wr.imm_data = mw.rkey
    p.b.qp.post_send(wr)
    expect(t + ': LOC_PROT_ERR', p.b.scq, [(0xb1, e.IBV_WC_LOC_PROT_ERR)])
    closeall(mw, p)

    t = 'M5 SEND_WITH_INV of a type 1 window'
    p = Pair(env, b_conn={'access': ALL_QP})
    mw = MW(env.pd, T1)
    bind1(p.b, mw, tgt.mr, tgt.addr(0), PAGE, RW, 0xb0)
    expect(t + ': bind', p.b.scq, [(0xb0, OK)])
    post_recv(p.b, 0xb1, [sge(la, 0, 64)])
    wr = mk_send(0xa1, e.IBV_WR_SEND_WITH_INV, [sge(la, 0, 16)])
    wr.imm_data = mw.rkey
    p.a.qp.post_send(wr)
    expect(t + ': requester gets REM_INV_REQ_ERR', p.a.scq,
           [(0xa1, e.IBV_WC_REM_INV_REQ_ERR)])
    expect(t + ': responder\'s receive gets REM_INV_REQ_ERR', p.b.rcq,
           [(0xb1, e.IBV_WC_REM_INV_REQ_ERR)])
    closeall(mw, p)

    t = 'M5 SEND_WITH_INV over a QP a type 2 window is not bound to'
    p = Pair(env, b_conn={'access': ALL_QP})
    q = Pair(env, b_conn={'access': ALL_QP})
    mw = MW(env.pd, T2)
    rkey = bind2(p.b, mw, tgt.mr, tgt.addr(0), PAGE, RW, 0xb0)
    expect(t + ': bind', p.b.scq, [(0xb0, OK)])
    post_recv(q.b, 0xb1, [sge(la, 0, 64)])
    wr = mk_send(0xa1, e.IBV_WR_SEND_WITH_INV, [sge(la, 0, 16)])
    wr.imm_data = rkey
    q.a.qp.post_send(wr)
    expect(t + ': requester gets REM_INV_REQ_ERR', q.a.scq,
           [(0xa1, e.IBV_WC_REM_INV_REQ_ERR)])
    rdma(p.a, 0xa2, e.IBV_WR_RDMA_WRITE, la, 0, 16, rkey, tgt.addr(0))
    expect(t + ': the window still works over its own QP', p.a.scq,
           [(0xa2, OK)])
    closeall(mw, p)
    q.close()

    t = 'M5 a window\'s rkey used as an lkey'
    p = Pair(env, b_conn={'access': ALL_QP})
    mw = MW(env.pd, T2)
    rkey = bind2(p.a, mw, tgt.mr, tgt.addr(0), PAGE, RW | RR, 0xa0)
    expect(t + ': bind', p.a.scq, [(0xa0, OK)])
    post_recv(p.b, 0xb1, [sge(la, 64, 64)])
    p.a.qp.post_send(mk_send(0xa1, e.IBV_WR_SEND, [SGE(tgt.addr(0), 16,
                                                        rkey)]))
    expect(t + ': LOC_PROT_ERR', p.a.scq, [(0xa1, e.IBV_WC_LOC_PROT_ERR)])
    closeall(mw, p, tgt.mr, la)


@case
def uc_bind(env):
    t = 'M6 UC type 2'
    a, b = UCSide(env), UCSide(env)
    uc_connect(env, a, b.qpn, 0x100, 0x200)
    uc_connect(env, b, a.qpn, 0x200, 0x100)
    tgt = target(env, 81)
    la, _ = filled_mr(env, PAGE, LW, 82)
    mw = MW(env.pd, T2)
    rkey = bind2(b, mw, tgt.mr, tgt.addr(PAGE), PAGE, RW, 0xb0)
    bound_ok(t + ': BIND_MW on a UC QP', b, 0xb0)
    rdma(a, 0xa1, e.IBV_WR_RDMA_WRITE, la, 0, 2000, rkey, tgt.addr(PAGE))
    expect(t + ': UC WRITE through the window', a.scq, [(0xa1, OK)])
    end = time.monotonic() + 5
    while tgt.map[PAGE:PAGE + 2000] != la.read(2000, 0) and \
            time.monotonic() < end:
        time.sleep(0.01)
    check(tgt.map[PAGE:PAGE + 2000] == la.read(2000, 0),
          t + ': the bytes landed')
    closeall(mw, a, b, tgt.mr, la)


@case
def qp_destroyed(env):
    t = 'M8 type 2 window of a destroyed QP'
    tgt = target(env, 95)
    la, _ = filled_mr(env, PAGE, LW, 96)
    p = Pair(env, b_conn={'access': ALL_QP})
    mw = MW(env.pd, T2)
    rkey = bind2(p.b, mw, tgt.mr, tgt.addr(0), PAGE, RW, 0xb0)
    expect(t + ': bind', p.b.scq, [(0xb0, OK)])
    p.close()
    # Free again: a bind through another QP succeeds, the old key is dead.
    q = Pair(env, b_conn={'access': ALL_QP})
    rkey2 = bind2(q.b, mw, tgt.mr, tgt.addr(0), PAGE, RW, 0xb1)
    expect(t + ': the window is free again (bind through another QP)',
           q.b.scq, [(0xb1, OK)])
    rdma(q.a, 0xa1, e.IBV_WR_RDMA_WRITE, la, 0, 32, rkey2, tgt.addr(0))
    expect(t + ': WRITE through the new binding', q.a.scq, [(0xa1, OK)])
    check(tgt.map[0:32] == la.read(32, 0), t + ': the bytes landed')
    # pyverbs derives both keys from the ibv_mw's (unchanged) key.
    comment('%s: keys %#x then %#x' % (t, rkey, rkey2))
    closeall(mw, q, tgt.mr, la)


def die(env):
    """The child: windows of both types bound, then exit without freeing
    anything; the kernel's cleanup must undo the bindings before the MR."""
    p = Pair(env, b_conn={'access': ALL_QP})
    mws = []
    for ty in (T1, T2, T2):
        tgt = target(env, 91)
        mw = MW(env.pd, ty)
        mws.append((mw, tgt))
        if ty == T1:
            bind1(p.b, mw, tgt.mr, tgt.addr(0), PAGE, RW, 0xb0)
        else:
            bind2(p.b, mw, tgt.mr, tgt.addr(0), PAGE, RW, 0xb0)
    # An MW allocated before its MR: uverbs destroys the MR first.
    late_mw = MW(env.pd, T2)
    late = target(env, 92)
    bind2(p.b, late_mw, late.mr, late.addr(0), PAGE, RW, 0xb0)
    got = expect('M7 child: four binds', p.b.scq, [(0xb0, OK)] * 4)
    sys.stdout.flush()
    os._exit(0 if len(got) == 4 else 3)	# pylint: disable=protected-access


@case
def process_death(env, dev, ip):
    t = 'M7 a process dies with windows bound'
    r = subprocess.run([sys.executable, __file__, dev, '--ip', ip, '--die'],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=120, check=False)
    out = r.stdout.decode(errors='replace')
    for line in out.splitlines():
        comment('child: ' + line)
    check(r.returncode == 0, t + ': the child bound them and exited',
          'exit %d' % r.returncode)
    mw = MW(env.pd, T2)
    check(mw.rkey >> 8 >= 0x800000, t + ': windows still allocate after')
    closeall(mw)


def main():
    args, env, t0 = start(('--die', {'action': 'store_true'}))
    if not env:
        return 1
    if args.die:
        die(env)
    caps(env)
    type1(env)
    type2(env)
    refusals(env)
    bind_errors(env)
    inv_errors(env)
    uc_bind(env)
    qp_destroyed(env)
    process_death(env, args.dev, args.ip)
    return env.finish('mw.py', t0)


if __name__ == '__main__':
    sys.exit(main())
