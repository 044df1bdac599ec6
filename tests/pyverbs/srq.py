#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Shared receive queues on one device, through the stock rxe provider:
create and query; RC, UC and UD QPs taking their receives from one SRQ in
posting order; an RC SEND that finds the SRQ empty (RNR, then delivered
once a WQE is posted); the limit event (IBV_EVENT_SRQ_LIMIT_REACHED once
per arming, then srq_limit 0); IBV_SRQ_MAX_WR resize with WQEs posted; a
limit above max_wr refused; a QP in ERR leaves the SRQ's WQEs alone (and
raises IBV_EVENT_QP_LAST_WQE_REACHED); destroying an SRQ a QP still uses
fails with EBUSY.

usage: srq.py DEV --ip A.B.C.D
"""
import argparse
import ctypes
import errno
import fcntl
import os
import select
import sys
import time

from pyverbs.cq import CQ
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr
from pyverbs.wr import RecvWR
from sroce_lib import (Env, GRH, LW, Side, UCSide, UDSide, case, check,
                       closeall, comment, connect, e, expect, expect_errno,
                       expect_none, filled_mr, make_ah, post_send, sge,
                       state_check, uc_connect, ud_send, wc_str)


EV = {}
for _n in ('CQ_ERR', 'QP_FATAL', 'QP_REQ_ERR', 'QP_ACCESS_ERR',
           'COMM_EST', 'SQ_DRAINED', 'PATH_MIG', 'PATH_MIG_ERR',
           'DEVICE_FATAL', 'PORT_ACTIVE', 'PORT_ERR', 'LID_CHANGE',
           'PKEY_CHANGE', 'SM_CHANGE', 'SRQ_ERR', 'SRQ_LIMIT_REACHED',
           'QP_LAST_WQE_REACHED', 'CLIENT_REREGISTER', 'GID_CHANGE'):
    EV[getattr(e, 'IBV_EVENT_' + _n)] = _n


def event_fds():
    """This process's uverbs event files (the async fd of each context
    and every completion channel)."""
    out = set()
    for fd in os.listdir('/proc/self/fd'):
        try:
            if os.readlink('/proc/self/fd/' + fd) == \
                    'anon_inode:[infinibandevent]':
                out.add(int(fd))
        except OSError:
            pass
    return out


class Events:
    """The context's async events, without blocking: its async fd, found
    as the event file that appeared when the context was opened, is made
    non-blocking and waited on with select."""

    def __init__(self, ctx, fd):
        self.ctx = ctx
        self.fd = fd
        fl = fcntl.fcntl(fd, fcntl.F_GETFL)
        fcntl.fcntl(fd, fcntl.F_SETFL, fl | os.O_NONBLOCK)

    def get(self, secs):
        """Every event within secs (acknowledged), as names."""
        got = []
        end = time.monotonic() + secs
        while True:
            left = end - time.monotonic()
            if left <= 0:
                break
            r, _, _ = select.select([self.fd], [], [], left)
            if not r:
                break
            try:
                ev = self.ctx.get_async_event()
            except PyverbsRDMAError:
                continue
            got.append(EV.get(ev.event_type, ev.event_type))
            ev.ack()
        return got


class SrqSide(Side):
    """An RC QP whose receives come from an SRQ."""

    # pylint: disable=super-init-not-called
    def __init__(self, env, srq, max_wr=64):
        self.scq = CQ(env.ctx, 256)
        self.rcq = CQ(env.ctx, 256)
        cap = QPCap(max_send_wr=max_wr, max_recv_wr=max_wr, max_send_sge=4,
                    max_recv_sge=4)
        self.qp = QP(env.pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=self.scq,
                                        rcq=self.rcq, srq=srq, cap=cap,
                                        sq_sig_all=1))
        self.qpn = self.qp.qp_num


def rc_to_srq(env, srq, psn, **kw):
    """An RC sender and an RC receiver on srq, connected."""
    a = Side(env, max_wr=128)
    b = SrqSide(env, srq)
    connect(env, a, b.qpn, psn, psn + 0x100, **kw)
    connect(env, b, a.qpn, psn + 0x100, psn, **kw)
    return a, b


def uc_to_srq(env, srq, psn):
    a = UCSide(env)
    b = UCSide(env, srq=srq)
    uc_connect(env, a, b.qpn, psn, psn + 0x100)
    uc_connect(env, b, a.qpn, psn + 0x100, psn)
    return a, b


def mk_srq(env, max_wr, max_sge=2):
    return SRQ(env.pd, SrqInitAttr(SrqAttr(max_wr=max_wr, max_sge=max_sge)))


def srq_post(srq, wr_id, sges):
    srq.post_recv(RecvWR(wr_id=wr_id, num_sge=len(sges), sg=sges))


def modify(srq, mask, max_wr=0, limit=0):
    srq.modify(SrqAttr(max_wr=max_wr, max_sge=0, srq_limit=limit), mask)


@case
def create_query(env):
    t = 'S1 create/query'
    da = env.ctx.query_device()
    comment('%s: device max_srq %d max_srq_wr %d max_srq_sge %d' %
            (t, da.max_srq, da.max_srq_wr, da.max_srq_sge))
    check(da.max_srq > 0 and da.max_srq_wr > 0 and da.max_srq_sge > 0,
          t + ': the device reports SRQ capabilities')
    for want_wr, want_sge in ((1, 1), (100, 3), (1000, 1), (16, 6)):
        tt = '%s max_wr %d max_sge %d' % (t, want_wr, want_sge)
        try:
            s = mk_srq(env, want_wr, want_sge)
        except PyverbsRDMAError as x:
            check(False, tt + ': created', 'errno %d' % x.error_code)
            continue
        a = s.query()
        check(a.max_wr >= want_wr and a.max_sge >= want_sge and
              a.srq_limit == 0, tt + ': query max_wr, max_sge >= requested, '
              'srq_limit 0', 'max_wr %d max_sge %d srq_limit %d' %
              (a.max_wr, a.max_sge, a.srq_limit))
        s.close()
    for what, wr, sg in (('max_wr above the device\'s', da.max_srq_wr + 1, 1),
                         ('max_sge above the device\'s', 16,
                          da.max_srq_sge + 1)):
        expect_errno(lambda: mk_srq(env, wr, sg), errno.EINVAL,
                         '%s: %s fails with EINVAL' % (t, what))


@case
def shared_rc(env):
    t = 'S2 two RC QPs on one SRQ'
    srq = mk_srq(env, 32)
    a1, b1 = rc_to_srq(env, srq, 0x1000)
    a2, b2 = rc_to_srq(env, srq, 0x2000)
    rv, rv_data = filled_mr(env, 16 * 512, LW, 71)
    la, src = filled_mr(env, 8192, LW, 72)
    n = 12
    for k in range(n):
        srq_post(srq, 0x100 + k, [sge(rv, 512 * k, 512)])
    got = []
    for k in range(n):
        a, b = (a1, b1) if k % 2 == 0 else (a2, b2)
        post_send(a, 0x200 + k, e.IBV_WR_SEND, [sge(la, 10 * k, 100 + k)])
        expect('%s: SEND %d from peer %d completes' % (t, k, 1 + k % 2),
               a.scq, [(0x200 + k, e.IBV_WC_SUCCESS)])
        w = expect('%s: SEND %d lands in SRQ WQE %d' % (t, k, k), b.rcq,
                   [(0x100 + k, e.IBV_WC_SUCCESS)])
        got.extend(w)
    check(len(got) == n and all(
        w.byte_len == 100 + k and w.qp_num == (b1, b2)[k % 2].qpn and
        w.src_qp == (a1, a2)[k % 2].qpn and w.opcode == e.IBV_WC_RECV
        for k, w in enumerate(got)), t + ': byte_len, qp_num, src_qp',
        '; '.join(wc_str(w) for w in got))
    bad = [k for k in range(n) if rv.read(100 + k, 512 * k) !=
           src[10 * k:10 * k + 100 + k]]
    check(not bad, t + ': each message in its WQE\'s buffer',
          'wrong: %s' % bad)
    cur = rv.read(16 * 512, 0)
    check(all(cur[512 * k + 100 + k:512 * (k + 1)] ==
              rv_data[512 * k + 100 + k:512 * (k + 1)] for k in range(n)) and
          cur[512 * n:] == rv_data[512 * n:],
          t + ': nothing else written')

    t = 'S2 RC SEND with the SRQ empty'
    post_send(a1, 0x300, e.IBV_WR_SEND, [sge(la, 0, 64)])
    expect_none(t + ': no completion for 0.5 s', a1.scq, 0.5)
    state_check(t + ': sender still RTS', a1, e.IBV_QPS_RTS, 0)
    srq_post(srq, 0x301, [sge(rv, 0, 512)])
    expect(t + ': completes once a WQE is posted', a1.scq,
           [(0x300, e.IBV_WC_SUCCESS)])
    w = expect(t + ': received in it', b1.rcq, [(0x301, e.IBV_WC_SUCCESS)])
    if w:
        check(w[0].byte_len == 64 and rv.read(64, 0) == src[:64],
              t + ': byte_len and data', wc_str(w[0]))
    expect_none(t + ': nothing on the other QP', b2.rcq, 0.05)
    closeall(a1, b1, a2, b2, srq, rv, la)


@case
def shared_types(env):
    t = 'S3 RC, UC and UD QPs on one SRQ'
    srq = mk_srq(env, 32)
    ra, rb = rc_to_srq(env, srq, 0x3000)
    ca, cb = uc_to_srq(env, srq, 0x4000)
    ua, ub = UDSide(env), UDSide(env, srq=srq)
    ah = make_ah(env, env.gid, env.gid_index)
    rv, _ = filled_mr(env, 16 * 512, LW, 73)
    la, src = filled_mr(env, 8192, LW, 74)
    order = ['UD', 'RC', 'UC', 'UC', 'UD', 'RC', 'UD', 'UC', 'RC']
    for k in range(len(order)):
        srq_post(srq, 0x400 + k, [sge(rv, 512 * k, 512)])
    for k, kind in enumerate(order):
        n = 50 + 13 * k
        tt = '%s: %s SEND %d' % (t, kind, k)
        if kind == 'UD':
            ud_send(ua, 0x500 + k, [sge(la, k, n)], ah, ub.qpn)
            snd, rcv, grh = ua, ub, GRH
        else:
            snd, rcv = (ra, rb) if kind == 'RC' else (ca, cb)
            post_send(snd, 0x500 + k, e.IBV_WR_SEND, [sge(la, k, n)])
            grh = 0
        expect(tt + ': completes', snd.scq, [(0x500 + k, e.IBV_WC_SUCCESS)])
        w = expect(tt + ': lands in SRQ WQE %d' % k, rcv.rcq,
                   [(0x400 + k, e.IBV_WC_SUCCESS)])
        if w:
            check(w[0].byte_len == grh + n and w[0].src_qp == snd.qpn and
                  rv.read(n, 512 * k + grh) == src[k:k + n],
                  tt + ': byte_len, src_qp, data', wc_str(w[0]))
    for q in (rb, cb, ub):
        expect_none(t + ': nothing more on QP %#x' % q.qpn, q.rcq, 0.05)
    closeall(ra, rb, ca, cb, ua, ub, ah, srq, rv, la)


@case
def limit(env, ev):
    t = 'S4 limit event'
    srq = mk_srq(env, 16)
    ua, ub = UDSide(env), UDSide(env, srq=srq)
    ah = make_ah(env, env.gid, env.gid_index)
    rv, _ = filled_mr(env, 16 * 256, LW, 75)
    la, _ = filled_mr(env, 4096, LW, 76)
    stray = ev.get(0)
    if stray:
        comment('%s: events from before: %s' % (t, stray))
    nid = [0]

    def consume(k, tt):
        for _ in range(k):
            i = nid[0]
            nid[0] += 1
            ud_send(ua, 0x700 + i, [sge(la, 0, 16)], ah, ub.qpn)
            expect(tt + ': datagram %d sent' % i, ua.scq,
                   [(0x700 + i, e.IBV_WC_SUCCESS)])
            expect(tt + ': datagram %d received' % i, ub.rcq,
                   [(0x600 + i, e.IBV_WC_SUCCESS)])

    # Unarmed: draining it raises nothing.
    for k in range(3):
        srq_post(srq, 0x600 + k, [sge(rv, 256 * k, 256)])
    consume(3, t + ' unarmed')
    got = ev.get(0.3)
    check(not got, t + ': none while unarmed', got)
    for k in range(3, 13):	# 10 posted
        srq_post(srq, 0x600 + k, [sge(rv, 256 * k, 256)])
    modify(srq, e.IBV_SRQ_LIMIT, limit=4)
    a = srq.query()
    check(a.srq_limit == 4, t + ': query shows the armed limit 4',
          a.srq_limit)
    consume(6, t + ' 10 -> 4 left')
    got = ev.get(0.3)
    check(not got, t + ': none with 4 left (not below 4)', got)
    consume(1, t + ' 3 left')
    got = ev.get(1.0)
    check(got == ['SRQ_LIMIT_REACHED'],
          t + ': SRQ_LIMIT_REACHED once when 3 are left', got)
    a = srq.query()
    check(a.srq_limit == 0, t + ': then query shows srq_limit 0 (disarmed)',
          a.srq_limit)
    consume(1, t + ' 2 left')
    got = ev.get(0.3)
    check(not got, t + ': no second event below the limit', got)
    # Armed again, at 1 with 2 left.
    modify(srq, e.IBV_SRQ_LIMIT, limit=1)
    consume(1, t + ' re-armed at 1, 1 left')
    got = ev.get(0.3)
    check(not got, t + ': re-armed at 1: none with 1 left', got)
    consume(1, t + ' re-armed at 1, 0 left')
    got = ev.get(1.0)
    check(got == ['SRQ_LIMIT_REACHED'],
          t + ': re-armed at 1: the event once, with 0 left', got)
    check(srq.query().srq_limit == 0, t + ': re-armed: disarmed again')

    t = 'S6 limit above max_wr'
    mw = srq.query().max_wr
    try:
        modify(srq, e.IBV_SRQ_LIMIT, limit=mw + 1)
    except PyverbsRDMAError as x:
        check(x.error_code == errno.EINVAL, t + ': fails with EINVAL',
              'errno %d' % x.error_code)
    else:
        check(False, t + ': fails with EINVAL', 'modify succeeded')
    check(srq.query().srq_limit == 0, t + ': srq_limit unchanged (0)',
          srq.query().srq_limit)
    modify(srq, e.IBV_SRQ_LIMIT, limit=mw)
    check(srq.query().srq_limit == mw, t + ': limit == max_wr is accepted',
          srq.query().srq_limit)
    modify(srq, e.IBV_SRQ_LIMIT, limit=0)
    got = ev.get(0.2)
    if got:
        comment('%s: events: %s' % (t, got))
    closeall(ua, ub, ah, srq, rv, la)


@case
def resize(env):
    t = 'S5 resize'
    srq = mk_srq(env, 8)
    a, b = rc_to_srq(env, srq, 0x5000)
    m1 = srq.query().max_wr
    rv, _ = filled_mr(env, 256 * 128, LW, 77)
    la, src = filled_mr(env, 8192, LW, 78)
    for k in range(m1):
        srq_post(srq, 0x1000 + k, [sge(rv, 128 * k, 128)])
    try:
        srq_post(srq, 0x1000 + m1, [sge(rv, 128 * m1, 128)])
    except PyverbsRDMAError as x:
        check(True, t + ': full at max_wr %d: one more refused' % m1)
        comment('%s: refused with errno %d' % (t, x.error_code))
    else:
        check(False, t + ': full at max_wr %d: one more refused' % m1,
              'posted')
    # (A size that rounds up to the same ring would fit: a quarter.)
    small = max(1, m1 // 4)
    tt = t + ': to %d, fewer than the %d WQEs posted: EINVAL' % (small, m1)
    try:
        modify(srq, e.IBV_SRQ_MAX_WR, max_wr=small)
    except PyverbsRDMAError as x:
        check(x.error_code == errno.EINVAL, tt, 'errno %d' % x.error_code)
    else:
        check(False, tt, 'modify succeeded, max_wr now %d' %
              srq.query().max_wr)
    check(srq.query().max_wr == m1, t + ': max_wr unchanged by that',
          srq.query().max_wr)
    modify(srq, e.IBV_SRQ_MAX_WR, max_wr=100)
    m2 = srq.query().max_wr
    check(m2 >= 100, t + ': query max_wr >= 100 after', m2)
    m2 = min(m2, 255)
    for k in range(m1, m2):
        try:
            srq_post(srq, 0x1000 + k, [sge(rv, 128 * k, 128)])
        except PyverbsRDMAError as x:
            check(False, t + ': %d WQEs posted in all' % m2,
                  'WQE %d refused, errno %d' % (k, x.error_code))
            m2 = k
            break
    else:
        check(True, t + ': %d WQEs posted in all' % m2)
    got = []
    for k in range(m2):
        post_send(a, 0x2000 + k, e.IBV_WR_SEND, [sge(la, k, 1 + k % 100)])
        if k % 32 == 31 or k == m2 - 1:
            w = expect(t + ': SENDs up to %d complete' % k, a.scq,
                       [(0x2000 + i, e.IBV_WC_SUCCESS)
                        for i in range(k - k % 32, k + 1)])
            if not w:
                break
    got = expect(t + ': all %d received in posting order' % m2, b.rcq,
                 [(0x1000 + k, e.IBV_WC_SUCCESS) for k in range(m2)])
    if got:
        bad = [k for k in range(m2) if got[k].byte_len != 1 + k % 100 or
               rv.read(1 + k % 100, 128 * k) != src[k:k + 1 + k % 100]]
        check(not bad, t + ': byte_len and data in each WQE', bad[:10])
    closeall(a, b, srq, rv, la)


@case
def qp_error(env, ev):
    t = 'S7 QP in ERR on an SRQ'
    srq = mk_srq(env, 16)
    a1, b1 = rc_to_srq(env, srq, 0x6000)
    ca, cb = uc_to_srq(env, srq, 0x7000)
    rv, _ = filled_mr(env, 4096, LW, 79)
    la, src = filled_mr(env, 4096, LW, 80)
    for k in range(4):
        srq_post(srq, 0x800 + k, [sge(rv, 256 * k, 256)])
    ev.get(0)
    b1.qp.modify(QPAttr(qp_state=e.IBV_QPS_ERR), e.IBV_QP_STATE)
    state_check(t + ': the RC QP is in ERR', b1, e.IBV_QPS_ERR, 0)
    expect_none(t + ': none of the SRQ\'s WQEs flushed to its CQ', b1.rcq,
                0.5)
    got = ev.get(1.0)
    check(got.count('QP_LAST_WQE_REACHED') == 1,
          t + ': IBV_EVENT_QP_LAST_WQE_REACHED once', got)
    for k in range(4):
        post_send(ca, 0x900 + k, e.IBV_WR_SEND, [sge(la, k, 30 + k)])
    expect(t + ': another QP\'s SENDs complete', ca.scq,
           [(0x900 + k, e.IBV_WC_SUCCESS) for k in range(4)])
    w = expect(t + ': and take all 4 WQEs, in order', cb.rcq,
               [(0x800 + k, e.IBV_WC_SUCCESS) for k in range(4)])
    if w:
        check(all(w[k].byte_len == 30 + k and
                  rv.read(30 + k, 256 * k) == src[k:k + 30 + k]
                  for k in range(4)), t + ': byte_len and data')
    closeall(a1, b1, ca, cb, srq, rv, la)


def srq_pointer(srq):
    """The struct ibv_srq * inside a pyverbs SRQ object, found by its
    shape: ibv_srq starts {context, srq_context, pd, ...} and the ibv_pd
    it names starts {context}. Memory is read through /proc/self/mem so a
    wrong guess cannot fault."""
    fd = os.open('/proc/self/mem', os.O_RDONLY)

    def word(addr):
        try:
            b = os.pread(fd, 8, addr)
        except OSError:
            return None
        return int.from_bytes(b, 'little') if len(b) == 8 else None
    try:
        base = id(srq)
        for i in range(2, 16):
            p = word(base + 8 * i)
            if not p or p & 7:
                continue
            c, ctx_arg, pd = word(p), word(p + 8), word(p + 16)
            if not c or ctx_arg is None or not pd or pd & 7:
                continue
            if word(pd) == c:
                return p
    finally:
        os.close(fd)
    return None


@case
def destroy_busy(env):
    t = 'S8 destroy an SRQ a QP uses'
    srq = mk_srq(env, 8)
    b = UCSide(env, srq=srq)
    p = srq_pointer(srq)
    check(p is not None, t + ': found the ibv_srq (test plumbing)')
    if p is None:
        closeall(b, srq)
        return
    # pyverbs would destroy the QP first: call libibverbs directly.
    lib = ctypes.CDLL('libibverbs.so.1')
    lib.ibv_destroy_srq.argtypes = [ctypes.c_void_p]
    rc = lib.ibv_destroy_srq(p)
    check(rc == errno.EBUSY, t + ': ibv_destroy_srq fails with EBUSY',
          'returned %d' % rc)
    if rc == 0:
        os._exit(1)	# pyverbs still holds the freed SRQ: stop here
    a = srq.query()
    check(a.max_wr >= 8, t + ': the SRQ still answers query', a.max_wr)
    b.close()
    try:
        srq.close()
    except PyverbsRDMAError as x:
        check(False, t + ': destroyed once the QP is gone', x)
    else:
        check(True, t + ': destroyed once the QP is gone')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('dev')
    ap.add_argument('--ip', required=True)
    args = ap.parse_args()
    t0 = time.monotonic()
    before = event_fds()
    env = Env(args.dev, args.ip)
    new = sorted(event_fds() - before)
    check(env.gid_index is not None,
          'IPv4 RoCE v2 GID %s found in sysfs' % env.gid)
    check(len(new) == 1, 'the context\'s async event fd found (test '
          'plumbing)', new)
    if env.gid_index is None or len(new) != 1:
        return 1
    ev = Events(env.ctx, new[0])
    create_query(env)
    shared_rc(env)
    shared_types(env)
    limit(env, ev)
    resize(env)
    qp_error(env, ev)
    destroy_busy(env)
    left = ev.get(0.2)
    if left:
        comment('async events at the end: %s' % left)
    return env.finish('srq.py', t0)


if __name__ == '__main__':
    sys.exit(main())
