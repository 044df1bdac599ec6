#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""UC QPs of one device talking to each other (the driver's local
delivery), through the stock rxe provider: SEND, SEND_WITH_IMM, a
multi-packet SEND, RDMA_WRITE and RDMA_WRITE_WITH_IMM with their data
checked; what UC drops silently (a SEND with no receive posted, a WRITE
with a bad rkey: the sender completes with success, the receiver sees
nothing, stays RTS and takes later messages); what it refuses (READ and
atomics: LOC_QP_OP_ERR on the sender); a SEND longer than the posted
receive (LOC_LEN_ERR on that receive, the receiver's QP to ERR).

usage: uc.py DEV --ip A.B.C.D
"""
import errno
import sys
import time

from pyverbs.addr import AHAttr, GID, GlobalRoute
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QPAttr
from pyverbs.wr import SendWR
from sroce_lib import (LW, MTU1024, PAGE, QPS, RR, RW, Region, SIG, UCSide,
                       UC_INIT, UC_RTR, UC_RTS, case, check, comment, e,
                       expect, expect_none, filled_mr, init_attr, post_recv,
                       post_send, sge, start, state_check, uc_connect, wc_str)


RV = 20480	# each pair's receive buffer and source
class UCPair:
    """Sender a and receiver b, connected to each other, with b's target
    region (a page each side of its MR), b's receive buffer and a's
    source, each filled with a pattern."""

    def __init__(self, env, a_kw=None, b_kw=None, b_access=LW | RW):
        self.a = UCSide(env, **(a_kw or {}))
        self.b = UCSide(env, **(b_kw or {}))
        uc_connect(env, self.a, self.b.qpn, 0x3000, 0x9000)
        uc_connect(env, self.b, self.a.qpn, 0x9000, 0x3000, access=b_access)
        self.tgt = Region(env, 6 * PAGE, LW | RW, off=PAGE, length=4 * PAGE,
                          seed=51)
        self.want = bytearray(self.tgt.data)
        self.rv, self.rv_data = filled_mr(env, RV, LW, 52)
        self.la, self.src = filled_mr(env, RV, LW, 53)

    def tgt_check(self, name):
        cur = self.tgt.map[:]
        bad = [i for i in range(len(cur)) if cur[i] != self.want[i]]
        check(not bad, name, '%d bytes differ, first at %d' %
              (len(bad), bad[0]) if bad else '')

    def still_rts(self, t):
        state_check(t + ': sender still RTS', self.a, e.IBV_QPS_RTS, 0)
        state_check(t + ': receiver still RTS', self.b, e.IBV_QPS_RTS, 0)

    def close(self):
        self.a.close()
        self.b.close()
        for m in (self.tgt.mr, self.rv, self.la):
            m.close()


def recv_wc_check(name, w, opcode, n, qpn, src_qp, imm=None):
    ok = (w.opcode == opcode and w.byte_len == n and w.qp_num == qpn and
          w.src_qp == src_qp and
          bool(w.wc_flags & e.IBV_WC_WITH_IMM) == (imm is not None) and
          (imm is None or w.imm_data == imm))
    check(ok, name + ': recv wc: opcode %d, byte_len %d, qp_num, src_qp%s' %
          (opcode, n, '' if imm is None else ', WITH_IMM, imm_data'),
          wc_str(w))


@case
def sends(env):
    p = UCPair(env)
    a, b = p.a, p.b
    for k, (n, imm) in enumerate(((64, None), (33, 0xfeedf00d),
                                  (10000, None), (2048, 0x01020304),
                                  (0, None))):
        t = 'C1 UC SEND%s %d bytes' % ('' if imm is None else '_WITH_IMM', n)
        op = e.IBV_WR_SEND if imm is None else e.IBV_WR_SEND_WITH_IMM
        post_recv(b, 0x100 + k, [sge(p.rv, 0, RV)])
        post_send(a, 0x200 + k, op, [sge(p.la, 7 * k, n)], imm=imm)
        ws = expect(t + ': send completes', a.scq,
                    [(0x200 + k, e.IBV_WC_SUCCESS)])
        if ws:
            check(ws[0].opcode == e.IBV_WC_SEND, t + ': send wc opcode SEND',
                  wc_str(ws[0]))
        wr = expect(t + ': received', b.rcq, [(0x100 + k, e.IBV_WC_SUCCESS)])
        if wr:
            recv_wc_check(t, wr[0], e.IBV_WC_RECV, n, b.qpn, a.qpn, imm)
        cur = p.rv.read(RV, 0)
        check(cur[:n] == p.src[7 * k:7 * k + n], t + ': data')
        check(cur[n:] == p.rv_data[n:], t + ': nothing past the message')
        p.rv.write(p.rv_data, RV)
    # Several in a row, each in its own receive, in order.
    t = 'C1 UC 8 SENDs of 1 to 3000 bytes posted at once'
    sizes = [1, 1024, 1025, 3000, 17, 2048, 999, 4]
    lens = [4096 if n > 2048 else 2048 for n in sizes]
    offs = [sum(lens[:k]) for k in range(8)]
    for k in range(8):
        post_recv(b, 0x300 + k, [sge(p.rv, offs[k], lens[k])])
    for k, n in enumerate(sizes):
        post_send(a, 0x400 + k, e.IBV_WR_SEND, [sge(p.la, 100 * k, n)])
    expect(t + ': all complete on the sender', a.scq,
           [(0x400 + k, e.IBV_WC_SUCCESS) for k in range(8)])
    wr = expect(t + ': all received in order', b.rcq,
                [(0x300 + k, e.IBV_WC_SUCCESS) for k in range(8)])
    if wr:
        check([w.byte_len for w in wr] == sizes, t + ': byte_lens',
              [w.byte_len for w in wr])
    bad = [k for k, n in enumerate(sizes)
           if p.rv.read(n, offs[k]) != p.src[100 * k:100 * k + n]]
    check(not bad, t + ': data', 'wrong in messages %s' % bad)
    p.still_rts('C1')
    p.close()


@case
def writes(env):
    p = UCPair(env)
    a, b = p.a, p.b
    t = 'C2 UC RDMA_WRITE'
    base = PAGE	# the MR starts a page into the mapping
    for k, (off, n) in enumerate(((100, 300), (2000, 5000), (0, 1))):
        tt = '%s %d bytes' % (t, n)
        post_send(a, 0x500 + k, e.IBV_WR_RDMA_WRITE, [sge(p.la, 50, n)],
                  rkey=p.tgt.mr.rkey, raddr=p.tgt.addr(base + off))
        ws = expect(tt + ': completes', a.scq,
                    [(0x500 + k, e.IBV_WC_SUCCESS)])
        if ws:
            check(ws[0].opcode == e.IBV_WC_RDMA_WRITE,
                  tt + ': wc opcode RDMA_WRITE', wc_str(ws[0]))
        p.want[base + off:base + off + n] = p.src[50:50 + n]
        # No ACK on UC: the data lands right behind the completion.
        time.sleep(0.05)
        p.tgt_check(tt + ': wrote exactly its bytes')
    expect_none(t + ': consumed no receive', b.rcq)

    t = 'C3 UC RDMA_WRITE_WITH_IMM'
    for k, n in enumerate((500, 4000)):
        tt = '%s %d bytes' % (t, n)
        post_recv(b, 0x600 + k, [sge(p.rv, 0, 64)])
        post_send(a, 0x610 + k, e.IBV_WR_RDMA_WRITE_WITH_IMM,
                  [sge(p.la, 3000, n)], imm=0xabc00000 + k,
                  rkey=p.tgt.mr.rkey, raddr=p.tgt.addr(base + 8000))
        expect(tt + ': completes', a.scq, [(0x610 + k, e.IBV_WC_SUCCESS)])
        wr = expect(tt + ': consumes the posted receive', b.rcq,
                    [(0x600 + k, e.IBV_WC_SUCCESS)])
        if wr:
            recv_wc_check(tt, wr[0], e.IBV_WC_RECV_RDMA_WITH_IMM, n, b.qpn,
                          a.qpn, 0xabc00000 + k)
        p.want[base + 8000:base + 8000 + n] = p.src[3000:3000 + n]
        p.tgt_check(tt + ': data in the target, nothing else')
        check(p.rv.read(RV, 0) == p.rv_data,
              tt + ': receive buffer untouched')
    p.still_rts('C2, C3')
    p.close()


@case
def no_recv(env):
    p = UCPair(env)
    a, b = p.a, p.b
    for k, n in enumerate((64, 3000)):
        t = 'C4 UC SEND %d bytes with no receive posted' % n
        post_send(a, 0x700 + k, e.IBV_WR_SEND, [sge(p.la, 0, n)])
        expect(t + ': the sender completes with success', a.scq,
               [(0x700 + k, e.IBV_WC_SUCCESS)])
        expect_none(t + ': nothing on the receiver\'s CQ', b.rcq, 0.5)
        p.still_rts(t)
        post_recv(b, 0x710 + k, [sge(p.rv, 0, RV)])
        post_send(a, 0x720 + k, e.IBV_WR_SEND, [sge(p.la, 5000, 111)])
        expect(t + ': the next SEND completes', a.scq,
               [(0x720 + k, e.IBV_WC_SUCCESS)])
        wr = expect(t + ': the next SEND arrives in the posted receive',
                    b.rcq, [(0x710 + k, e.IBV_WC_SUCCESS)])
        if wr:
            recv_wc_check(t + ': the next SEND', wr[0], e.IBV_WC_RECV, 111,
                          b.qpn, a.qpn)
        check(p.rv.read(111, 0) == p.src[5000:5111],
              t + ': the next SEND\'s data')
    t = 'C4 UC WRITE_WITH_IMM with no receive posted'
    post_send(a, 0x730, e.IBV_WR_RDMA_WRITE_WITH_IMM, [sge(p.la, 0, 200)],
              imm=0x77, rkey=p.tgt.mr.rkey, raddr=p.tgt.addr(PAGE))
    expect(t + ': the sender completes with success', a.scq,
           [(0x730, e.IBV_WC_SUCCESS)])
    expect_none(t + ': nothing on the receiver\'s CQ', b.rcq, 0.5)
    # Whether the data was placed is up to the responder; it is not checked.
    p.tgt.map[:] = p.tgt.data
    p.still_rts(t)
    post_recv(b, 0x731, [sge(p.rv, 0, 64)])
    post_send(a, 0x732, e.IBV_WR_RDMA_WRITE_WITH_IMM, [sge(p.la, 0, 200)],
              imm=0x78, rkey=p.tgt.mr.rkey, raddr=p.tgt.addr(PAGE))
    expect(t + ': the next one completes', a.scq,
           [(0x732, e.IBV_WC_SUCCESS)])
    wr = expect(t + ': the next one consumes the receive posted since',
                b.rcq, [(0x731, e.IBV_WC_SUCCESS)])
    if wr:
        recv_wc_check(t + ': the next one', wr[0],
                      e.IBV_WC_RECV_RDMA_WITH_IMM, 200, b.qpn, a.qpn, 0x78)
    p.want[PAGE:PAGE + 200] = p.src[:200]
    p.tgt_check(t + ': the next one\'s data')
    p.close()


@case
def bad_rkey(env):
    p = UCPair(env)
    a, b = p.a, p.b
    for t, rkey_fn, off, n in (
            ('C5 UC WRITE bad rkey (key byte)',
             lambda k: (k & ~0xff) | ((k + 0x55) & 0xff), 0, 64),
            ('C5 UC WRITE bad rkey (no such index)',
             lambda k: 0xfffff05a, 0, 64),
            ('C5 UC 3-packet WRITE running past the end of the MR',
             lambda k: k, 4 * PAGE - 1000, 3000),
            ('C5 UC WRITE into a QP without REMOTE_WRITE', None, 0, 64)):
        if rkey_fn is None:
            p.close()
            p = UCPair(env, b_access=LW)
            a, b = p.a, p.b
            rkey = p.tgt.mr.rkey
        else:
            rkey = rkey_fn(p.tgt.mr.rkey)
        post_recv(b, 0x800, [sge(p.rv, 0, 64)])
        post_send(a, 0x801, e.IBV_WR_RDMA_WRITE, [sge(p.la, 0, n)],
                  rkey=rkey, raddr=p.tgt.addr(PAGE + off))
        expect(t + ': the sender completes with success', a.scq,
               [(0x801, e.IBV_WC_SUCCESS)])
        time.sleep(0.2)
        check(p.tgt.untouched(), t + ': target memory untouched',
              p.tgt.diff())
        expect_none(t + ': nothing on the receiver\'s CQ', b.rcq, 0.2)
        p.still_rts(t)
        post_send(a, 0x802, e.IBV_WR_RDMA_WRITE, [sge(p.la, 100, 40)],
                  rkey=p.tgt.mr.rkey, raddr=p.tgt.addr(PAGE + 200))
        expect(t + ': a good WRITE afterwards completes', a.scq,
               [(0x802, e.IBV_WC_SUCCESS)])
        time.sleep(0.05)
        if rkey_fn is not None:
            p.want[PAGE + 200:PAGE + 240] = p.src[100:140]
            p.tgt_check(t + ': a good WRITE afterwards lands')
        post_send(a, 0x803, e.IBV_WR_SEND, [sge(p.la, 300, 20)])
        expect(t + ': a SEND afterwards completes', a.scq,
               [(0x803, e.IBV_WC_SUCCESS)])
        wr = expect(t + ': a SEND afterwards takes the receive posted '
                    'before', b.rcq, [(0x800, e.IBV_WC_SUCCESS)])
        if wr:
            check(wr[0].byte_len == 20 and
                  p.rv.read(20, 0) == p.src[300:320],
                  t + ': a SEND afterwards: byte_len and data',
                  wc_str(wr[0]))
        p.rv.write(p.rv_data, RV)
        p.tgt.map[:] = p.tgt.data
        p.want = bytearray(p.tgt.data)
    p.close()


@case
def unsupported(env):
    for t, op in (('C6 READ on UC', e.IBV_WR_RDMA_READ),
                  ('C6 FETCH_AND_ADD on UC', e.IBV_WR_ATOMIC_FETCH_AND_ADD),
                  ('C6 CMP_AND_SWP on UC', e.IBV_WR_ATOMIC_CMP_AND_SWP)):
        p = UCPair(env, b_access=LW | RW | RR)
        tgt = Region(env, 3 * PAGE, LW | RW | RR | e.IBV_ACCESS_REMOTE_ATOMIC,
                     off=PAGE, length=PAGE, seed=61)
        wr = SendWR(wr_id=0x901, opcode=op, num_sge=1,
                    sg=[sge(p.la, 0, 64 if op == e.IBV_WR_RDMA_READ else 8)],
                    send_flags=SIG)
        if op == e.IBV_WR_RDMA_READ:
            wr.set_wr_rdma(tgt.mr.rkey, tgt.addr(PAGE))
        else:
            wr.set_wr_atomic(tgt.mr.rkey, tgt.addr(PAGE), 1, 2)
        try:
            p.a.qp.post_send(wr)
        except PyverbsRDMAError as x:
            check(x.error_code == errno.EINVAL,
                  t + ': refused at post (EINVAL)', 'errno %d' % x.error_code)
        else:
            expect(t + ': completes LOC_QP_OP_ERR', p.a.scq,
                   [(0x901, e.IBV_WC_LOC_QP_OP_ERR)])
            st = p.a.wait_state(e.IBV_QPS_ERR, 1.0)
            comment('%s: the sender is in %s afterwards' %
                    (t, QPS.get(st, st)))
        time.sleep(0.1)
        check(tgt.untouched(), t + ': remote memory untouched', tgt.diff())
        check(p.la.read(RV, 0) == p.src, t + ': local buffer untouched')
        expect_none(t + ': nothing on the receiver\'s CQ', p.b.rcq, 0.1)
        state_check(t + ': receiver still RTS', p.b, e.IBV_QPS_RTS, 0)
        tgt.mr.close()
        p.close()


@case
def too_long(env):
    t = 'C7 UC SEND 3000 bytes into a 2000-byte receive'
    p = UCPair(env)
    a, b = p.a, p.b
    post_recv(b, 0xa01, [sge(p.rv, 0, 2000)])
    post_recv(b, 0xa02, [sge(p.rv, 4096, 4096)])
    post_send(a, 0xa11, e.IBV_WR_SEND, [sge(p.la, 0, 3000)])
    expect(t + ': the sender completes with success', a.scq,
           [(0xa11, e.IBV_WC_SUCCESS)])
    expect(t + ': that receive LOC_LEN_ERR, the next flushed', b.rcq,
           [(0xa01, e.IBV_WC_LOC_LEN_ERR), (0xa02, e.IBV_WC_WR_FLUSH_ERR)])
    state_check(t + ': receiver QP in ERR', b, e.IBV_QPS_ERR)
    state_check(t + ': sender still RTS', a, e.IBV_QPS_RTS, 0)
    cur = p.rv.read(RV, 0)
    check(cur[2000:] == p.rv_data[2000:],
          t + ': nothing written past the receive buffer')
    p.close()


@case
def state_machine(env):
    t = 'C8 UC state machine'
    x = UCSide(env)
    peer = UCSide(env)
    x.qp.modify(init_attr(LW | RW), UC_INIT)
    a = QPAttr(qp_state=e.IBV_QPS_RTR)
    a.path_mtu = MTU1024
    a.dest_qp_num = peer.qpn
    a.rq_psn = 0x10
    a.ah_attr = AHAttr(gr=GlobalRoute(dgid=GID(env.gid),
                                      sgid_index=env.gid_index, hop_limit=64),
                       is_global=1, port_num=1)
    try:
        x.qp.modify(a, UC_RTR & ~e.IBV_QP_DEST_QPN)
    except PyverbsRDMAError as err:
        check(err.error_code == errno.EINVAL,
              t + ': INIT->RTR without DEST_QPN fails with EINVAL',
              'errno %d' % err.error_code)
    else:
        check(False, t + ': INIT->RTR without DEST_QPN fails with EINVAL',
              'modify succeeded')
    x.qp.modify(a, UC_RTR)
    a = QPAttr(qp_state=e.IBV_QPS_RTS)
    a.sq_psn = 0x20
    x.qp.modify(a, UC_RTS)
    q = x.qp.query(0x1fffff)[0]
    check(q.qp_state == e.IBV_QPS_RTS and q.dest_qp_num == peer.qpn and
          q.sq_psn == 0x20 and q.rq_psn == 0x10 and q.path_mtu == MTU1024,
          t + ': RTS without timeout/retry attributes; query returns them',
          'state %s dqpn %#x sq_psn %#x rq_psn %#x mtu %d' % (
              QPS.get(q.qp_state), q.dest_qp_num, q.sq_psn, q.rq_psn,
              q.path_mtu))
    x.close()
    peer.close()


def main():
    _, env, t0 = start()
    if not env:
        return 1
    state_machine(env)
    sends(env)
    writes(env)
    no_recv(env)
    bad_rkey(env)
    unsupported(env)
    too_long(env)
    return env.finish('uc.py', t0)


if __name__ == '__main__':
    sys.exit(main())
