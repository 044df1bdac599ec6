#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""RC error paths, with happy paths as controls, between RC QPs of one
device talking to each other (the driver's local delivery), through the
stock rxe provider.

usage: rc_errors.py DEV --ip A.B.C.D [--blackhole A.B.C.D]

--ip is this guest's IPv4 address; its RoCE v2 GID carries every pair.
--blackhole names an address with a static neighbour entry that nothing
answers on the wire (set up by the caller), for the retry-exhausted case.

Every error case checks the requester's completion status, whether the
responder's QP went to ERR (queried), the flush of a receive the responder
had posted, and that remote memory filled with a pattern beforehand is
unchanged. CQs are polled with a deadline; nothing waits forever. One
TAP-style line per check; non-zero exit on any failure.
"""
import ctypes
import errno
import os
import subprocess
import sys
import time

from pyverbs.mr import MR
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QPAttr
from pyverbs.wr import SGE

from sroce_lib import (Counters, Env, Fix, INIT_MASK, LW, PAGE, Pair, QPS, RR,
                       RTR_MASK, RTS_MASK, RW, Region, SECOND, SIG, ST, Side,
                       UNROUTED, after_error, case, check, cleanup, comment,
                       connect, e, expect, expect_modify_fails, expect_none,
                       expect_post_fails, filled_mr, gid_of, init_attr,
                       mem_check, mk_send, pattern, poll, post_recv,
                       post_send, qp_res, route_down, route_up, rtr_attr,
                       rts_attr, second_down, second_up, sge, start,
                       state_check, tx_packets, wc_str)


# --- 12. QP state machine ---------------------------------------------------

@case
def qp_state_machine(env):
    t = '12 state machine'
    peer = Side(env)
    x = Side(env, inline=64)
    check(x.state() == e.IBV_QPS_RESET, t + ': a new QP is in RESET',
          QPS.get(x.state()))
    expect_modify_fails(t + ': RESET->RTS directly fails with EINVAL', x,
                        rts_attr(env, 1), RTS_MASK)
    expect_modify_fails(t + ': RESET->RTR directly fails with EINVAL', x,
                        rtr_attr(env, peer.qpn, env.gid, 1), RTR_MASK)
    check(x.state() == e.IBV_QPS_RESET, t + ': still RESET after refusals',
          QPS.get(x.state()))
    expect_modify_fails(t + ': RESET->INIT without ACCESS_FLAGS fails', x,
                        init_attr(LW), INIT_MASK & ~e.IBV_QP_ACCESS_FLAGS)
    x.qp.modify(init_attr(LW | RW | RR), INIT_MASK)
    check(x.state() == e.IBV_QPS_INIT, t + ': RESET->INIT',
          QPS.get(x.state()))
    expect_modify_fails(t + ': INIT->RTS fails with EINVAL', x,
                        rts_attr(env, 1), RTS_MASK)
    rtr = rtr_attr(env, peer.qpn, env.gid, 0x777, min_rnr_timer=9)
    expect_modify_fails(t + ': INIT->RTR with only the state fails', x, rtr,
                        e.IBV_QP_STATE)
    for bit, what in ((e.IBV_QP_AV, 'AV'), (e.IBV_QP_PATH_MTU, 'PATH_MTU'),
                      (e.IBV_QP_DEST_QPN, 'DEST_QPN'),
                      (e.IBV_QP_RQ_PSN, 'RQ_PSN'),
                      (e.IBV_QP_MAX_DEST_RD_ATOMIC, 'MAX_DEST_RD_ATOMIC'),
                      (e.IBV_QP_MIN_RNR_TIMER, 'MIN_RNR_TIMER')):
        expect_modify_fails(t + ': INIT->RTR without %s fails' % what, x,
                            rtr, RTR_MASK & ~bit)
    check(x.state() == e.IBV_QPS_INIT, t + ': still INIT after refusals',
          QPS.get(x.state()))
    x.qp.modify(rtr, RTR_MASK)
    check(x.state() == e.IBV_QPS_RTR, t + ': INIT->RTR with every attribute',
          QPS.get(x.state()))
    rts = rts_attr(env, 0x4321, timeout=17, retry_cnt=5, rnr_retry=3)
    for bit, what in ((e.IBV_QP_SQ_PSN, 'SQ_PSN'),
                      (e.IBV_QP_TIMEOUT, 'TIMEOUT'),
                      (e.IBV_QP_RETRY_CNT, 'RETRY_CNT'),
                      (e.IBV_QP_RNR_RETRY, 'RNR_RETRY'),
                      (e.IBV_QP_MAX_QP_RD_ATOMIC, 'MAX_QP_RD_ATOMIC')):
        expect_modify_fails(t + ': RTR->RTS without %s fails' % what, x,
                            rts, RTS_MASK & ~bit)
    bad = rts_attr(env, 0x4321, timeout=17, retry_cnt=8, rnr_retry=3)
    expect_modify_fails(t + ': RTR->RTS with retry_cnt 8 fails', x, bad,
                        RTS_MASK)
    x.qp.modify(rts, RTS_MASK)
    check(x.state() == e.IBV_QPS_RTS, t + ': RTR->RTS with every attribute',
          QPS.get(x.state()))
    expect_modify_fails(t + ': RTS->RTR fails with EINVAL', x, rtr,
                        RTR_MASK)

    a, _ = x.qp.query(0x1fffff)
    want = {
        'qp_state': e.IBV_QPS_RTS, 'path_mtu': env.port_mtu,
        'timeout': 17, 'retry_cnt': 5, 'rnr_retry': 3, 'sq_psn': 0x4321,
        'rq_psn': 0x777, 'dest_qp_num': peer.qpn,
        'qp_access_flags': LW | RW | RR, 'min_rnr_timer': 9,
        'max_rd_atomic': env.rd_atom, 'max_dest_rd_atomic': env.rd_atom,
    }
    for k, v in want.items():
        got = getattr(a, k)
        check(got == v, t + ': query_qp %s is %#x' % (k, v), 'got %#x' % got)
    ah = a.ah_attr
    check(str(ah.dgid) == env.gid and ah.sgid_index == env.gid_index and
          ah.is_global == 1, t + ': query_qp AV (dgid, sgid index)',
          'dgid %s sgid_index %d is_global %d' % (ah.dgid, ah.sgid_index,
                                                  ah.is_global))
    check(a.cap.max_inline_data >= 64, t + ': query_qp cap max_inline >= 64',
          a.cap.max_inline_data)
    x.close()

    # post_send before RTS, on a QP of its own connected to a live peer.
    z = Side(env)
    expect_post_fails(t + ': post_send in RESET fails with EINVAL', z)
    z.qp.modify(init_attr(LW | RW | RR), INIT_MASK)
    expect_post_fails(t + ': post_send in INIT fails with EINVAL', z)
    z.qp.modify(rtr_attr(env, peer.qpn, env.gid, 0x10), RTR_MASK)
    expect_post_fails(t + ': post_send in RTR fails with EINVAL', z)
    # The provider wrote each refused WQE into the ring before the doorbell
    # the kernel refused: none of them may run once in RTS.
    connect(env, peer, z.qpn, 0x10, 0x20)
    rv = MR(env.pd, 64, LW)
    for i in range(4):
        post_recv(peer, 0xc00 + i, [sge(rv, 0, 64)])
    z.qp.modify(rts_attr(env, 0x20), RTS_MASK)
    got = poll(z.scq, 8, 1.0)
    rcv = poll(peer.rcq, 8, 0.1)
    psn = z.qp.query(e.IBV_QP_SQ_PSN)[0].sq_psn
    check(not got and not rcv and psn == 0x20,
          t + ': the 3 WRs refused before RTS never run',
          '%d send completion(s) [%s], %d receive(s) at the peer, '
          'sq_psn %#x -> %#x' % (len(got), '; '.join(wc_str(w) for w in got),
                                 len(rcv), 0x20, psn))
    z.qp.post_send(mk_send(0xc10, e.IBV_WR_SEND, []))
    expect(t + ': the first SEND posted in RTS completes', z.scq,
           [(0xc10, e.IBV_WC_SUCCESS)])
    expect(t + ': ... and is the first the peer receives', peer.rcq,
           [(0xc00, e.IBV_WC_SUCCESS)])
    z.close()
    peer.close()
    rv.close()


# --- 11. happy paths ----------------------------------------------------------

@case
def happy_send(env):
    t = '11 happy SEND'
    f = Fix(env)
    a, b = f.a, f.b
    post_recv(b, 0x1101, [sge(f.rv, 0, 4096)])
    post_send(a, 0x1102, e.IBV_WR_SEND, [sge(f.la, 0, 100)])
    ra = expect(t + ': SEND completes on the requester', a.scq,
                [(0x1102, e.IBV_WC_SUCCESS)])
    wc = expect(t + ': SEND received', b.rcq, [(0x1101, e.IBV_WC_SUCCESS)])
    if ra:
        check(ra[0].opcode == e.IBV_WC_SEND, t + ': requester wc opcode SEND',
              wc_str(ra[0]))
    if wc:
        w = wc[0]
        check(w.opcode == e.IBV_WC_RECV and w.byte_len == 100 and
              not (w.wc_flags & e.IBV_WC_WITH_IMM) and w.qp_num == b.qpn and
              w.src_qp == a.qpn,
              t + ': recv wc: opcode RECV, byte_len 100, no WITH_IMM flag, '
              'qp_num, src_qp', wc_str(w))
    check(f.rv.read(100, 0) == f.src[:100], t + ': data')

    t = '11 happy SEND_WITH_IMM'
    post_recv(b, 0x1111, [sge(f.rv, 0, 4096)])
    post_send(a, 0x1112, e.IBV_WR_SEND_WITH_IMM, [sge(f.la, 100, 33)],
              imm=0x12345678)
    expect(t + ': completes', a.scq, [(0x1112, e.IBV_WC_SUCCESS)])
    wc = expect(t + ': received', b.rcq, [(0x1111, e.IBV_WC_SUCCESS)])
    if wc:
        w = wc[0]
        check(w.opcode == e.IBV_WC_RECV and w.byte_len == 33 and
              (w.wc_flags & e.IBV_WC_WITH_IMM) and w.imm_data == 0x12345678,
              t + ': recv wc: opcode RECV, WITH_IMM flag, imm_data, '
              'byte_len 33', wc_str(w))
    check(f.rv.read(33, 0) == f.src[100:133], t + ': data')
    f.still_rts(t)

    # The ACKs timed a round trip; the timer waits at least IBTA's 67 ms
    # (timeout 14) and at least that round trip.
    t = '11 happy SEND: round trip measured'
    r = qp_res(env.dev, a.qpn)
    comment('%s: %s' % (t, r))
    tmo = (4096 << 14) // 1000
    check(r.get('srtt_us', 0) > 0 and
          r.get('rto_us', 0) >= max(tmo, r['srtt_us']),
          t + ': srtt_us > 0, rto_us at least 67 ms and srtt_us', r)
    # Its READ limits as modify_qp set them, and the READ request size
    # they give (64 packets shared by the READs allowed, 16 at least).
    chunk = max(16, min(64, 64 // env.rd_atom))
    check(r.get('rd_max') == env.rd_atom and
          r.get('rd_dest_max') == env.rd_atom and
          r.get('rd_chunk') == chunk,
          t + ': rd_max and rd_dest_max %d, rd_chunk %d'
          % (env.rd_atom, chunk), r)
    f.close()


@case
def happy_write(env):
    t = '11 happy WRITE'
    f = Fix(env)
    a, b = f.a, f.b
    post_recv(b, 0x1121, [sge(f.rv, 0, 4096)])	# must stay posted
    post_send(a, 0x1122, e.IBV_WR_RDMA_WRITE, [sge(f.la, 0, 300)],
              rkey=f.rb.rkey, raddr=f.rb.buf + 100)
    ra = expect(t + ': completes', a.scq, [(0x1122, e.IBV_WC_SUCCESS)])
    if ra:
        check(ra[0].opcode == e.IBV_WC_RDMA_WRITE,
              t + ': wc opcode RDMA_WRITE', wc_str(ra[0]))
    f.want[100:400] = f.src[:300]
    mem_check(t + ': wrote exactly its 300 bytes', f.rb, bytes(f.want))
    post_send(a, 0x1123, e.IBV_WR_RDMA_WRITE, [sge(f.la, 1000, 3000)],
              rkey=f.rb.rkey, raddr=f.rb.buf + 4000)
    expect(t + ': 3-packet WRITE completes', a.scq,
           [(0x1123, e.IBV_WC_SUCCESS)])
    f.want[4000:7000] = f.src[1000:4000]
    mem_check(t + ': 3-packet WRITE wrote exactly its 3000 bytes', f.rb,
              bytes(f.want))
    expect_none(t + ': consumed no receive', b.rcq)
    check(f.rv.read(8192, 0) == f.rv_data,
          t + ': left the receive buffer alone')
    f.still_rts(t)
    f.close()


@case
def happy_write_imm(env):
    for t, n in (('11 happy WRITE_WITH_IMM 500 bytes (1 packet)', 500),
                 ('11 happy WRITE_WITH_IMM 1500 bytes (2 packets)', 1500)):
        f = Fix(env)
        a, b = f.a, f.b
        post_recv(b, 0x1131, [sge(f.rv, 0, 4096)])
        post_send(a, 0x1132, e.IBV_WR_RDMA_WRITE_WITH_IMM,
                  [sge(f.la, 500, n)], imm=0xcafef00d, rkey=f.rb.rkey,
                  raddr=f.rb.buf + 2000)
        ra = expect(t + ': completes', a.scq, [(0x1132, e.IBV_WC_SUCCESS)])
        if ra:
            check(ra[0].opcode == e.IBV_WC_RDMA_WRITE,
                  t + ': requester wc opcode RDMA_WRITE', wc_str(ra[0]))
        wc = expect(t + ': consumes the posted receive', b.rcq,
                    [(0x1131, e.IBV_WC_SUCCESS)])
        if wc:
            w = wc[0]
            check(w.opcode == e.IBV_WC_RECV_RDMA_WITH_IMM and
                  w.byte_len == n and (w.wc_flags & e.IBV_WC_WITH_IMM) and
                  w.imm_data == 0xcafef00d,
                  t + ': recv wc: opcode RECV_RDMA_WITH_IMM, byte_len %d, '
                  'WITH_IMM flag, imm_data' % n, wc_str(w))
        f.want[2000:2000 + n] = f.src[500:500 + n]
        mem_check(t + ': data in the target MR', f.rb, bytes(f.want))
        check(f.rv.read(8192, 0) == f.rv_data,
              t + ': left the receive buffer alone')
        f.still_rts(t)
        f.close()


@case
def happy_read(env):
    t = '11 happy READ'
    f = Fix(env)
    a = f.a
    for wr_id, off, n, loc in ((0x1141, 50, 700, 5000), (0x1142, 3000, 2100,
                                                          100)):
        post_send(a, wr_id, e.IBV_WR_RDMA_READ, [sge(f.la, loc, n)],
                  rkey=f.rb.rkey, raddr=f.rb.buf + off)
        ra = expect(t + ' %d bytes: completes' % n, a.scq,
                    [(wr_id, e.IBV_WC_SUCCESS)])
        if ra:
            check(ra[0].opcode == e.IBV_WC_RDMA_READ,
                  t + ' %d bytes: wc opcode RDMA_READ' % n, wc_str(ra[0]))
        check(f.la.read(n, loc) == bytes(f.want[off:off + n]),
              t + ' %d bytes: data' % n)
    mem_check(t + ': left the remote MR alone', f.rb, bytes(f.want))
    expect_none(t + ': consumed no receive', f.b.rcq)
    f.still_rts(t)
    f.close()


@case
def happy_inline(env):
    t = '11 happy inline'
    f = Fix(env, a_kw={'inline': 256})
    a, b = f.a, f.b
    inl = a.qp.query(e.IBV_QP_CAP)[0].cap.max_inline_data
    check(inl >= 256, t + ': max_inline_data >= the 256 asked for', inl)
    comment('11: max_inline_data reported %d for 256 asked' % inl)
    ibuf = ctypes.create_string_buffer(pattern(inl, 99), inl)
    iaddr = ctypes.addressof(ibuf)
    post_recv(b, 0x1151, [sge(f.rv, 0, 4096)])
    # lkey 0 and unregistered memory: only inline can carry this.
    post_send(a, 0x1152, e.IBV_WR_SEND, [SGE(iaddr, inl, 0)],
              flags=SIG | e.IBV_SEND_INLINE)
    ctypes.memset(iaddr, 0, inl)	# copied at post time: must not matter
    expect(t + ' SEND of max_inline_data: completes', a.scq,
           [(0x1152, e.IBV_WC_SUCCESS)])
    wc = expect(t + ' SEND: received', b.rcq, [(0x1151, e.IBV_WC_SUCCESS)])
    if wc:
        check(wc[0].byte_len == inl, t + ' SEND: byte_len %d' % inl,
              wc_str(wc[0]))
    check(f.rv.read(inl, 0) == pattern(inl, 99),
          t + ' SEND: data as it was at post time')
    ctypes.memmove(iaddr, pattern(inl, 98), inl)
    post_send(a, 0x1153, e.IBV_WR_RDMA_WRITE, [SGE(iaddr, inl, 0)],
              flags=SIG | e.IBV_SEND_INLINE, rkey=f.rb.rkey,
              raddr=f.rb.buf + 4096)
    expect(t + ' WRITE of max_inline_data: completes', a.scq,
           [(0x1153, e.IBV_WC_SUCCESS)])
    f.want[4096:4096 + inl] = pattern(inl, 98)
    mem_check(t + ' WRITE: data', f.rb, bytes(f.want))
    # With sq_sig_all=1 an unsignaled WR still completes.
    post_send(a, 0x1161, e.IBV_WR_RDMA_WRITE, [sge(f.la, 0, 10)], flags=0,
              rkey=f.rb.rkey, raddr=f.rb.buf + 7000)
    expect('11 happy sq_sig_all=1: an unsignaled WR still completes', a.scq,
           [(0x1161, e.IBV_WC_SUCCESS)])
    f.still_rts(t)
    # One past max_inline_data is refused at post time.
    big = ctypes.create_string_buffer(inl + 1)
    try:
        post_send(a, 0x1181, e.IBV_WR_SEND,
                  [SGE(ctypes.addressof(big), inl + 1, 0)],
                  flags=SIG | e.IBV_SEND_INLINE)
        got = poll(a.scq, 1, 2)
        check(False, t + ' SEND of max_inline_data + 1 refused',
              'posted; then [%s]' % '; '.join(wc_str(w) for w in got))
    except PyverbsRDMAError as x:
        check(x.error_code == errno.EINVAL,
              t + ' SEND of max_inline_data + 1 refused with EINVAL',
              'errno %d' % x.error_code)
    f.close()


@case
def happy_zero(env):
    t = '11 happy zero-length'
    f = Fix(env)
    a, b = f.a, f.b
    post_recv(b, 0x1171, [sge(f.rv, 0, 64)])
    post_send(a, 0x1172, e.IBV_WR_SEND, [])
    expect(t + ' SEND: completes', a.scq, [(0x1172, e.IBV_WC_SUCCESS)])
    wc = expect(t + ' SEND: received', b.rcq, [(0x1171, e.IBV_WC_SUCCESS)])
    if wc:
        check(wc[0].byte_len == 0 and wc[0].opcode == e.IBV_WC_RECV,
              t + ' SEND: recv wc opcode RECV, byte_len 0', wc_str(wc[0]))
    check(f.rv.read(8192, 0) == f.rv_data,
          t + ' SEND: left the receive buffer alone')
    post_send(a, 0x1173, e.IBV_WR_RDMA_WRITE, [], rkey=f.rb.rkey,
              raddr=f.rb.buf + 8000)
    expect(t + ' WRITE: completes', a.scq, [(0x1173, e.IBV_WC_SUCCESS)])
    mem_check(t + ' WRITE: changed nothing', f.rb, bytes(f.want))
    expect_none(t + ' WRITE: consumed no receive', b.rcq)
    f.still_rts(t)
    f.close()


@case
def happy_unsignaled(env):
    t = '11 happy sq_sig_all=0'
    p = Pair(env, a_kw={'sig_all': 0})
    a, b = p.a, p.b
    rb, rb_data = filled_mr(env, 4096, LW | RW, 6)
    la, src = filled_mr(env, 4096, LW, 7)
    rv, _ = filled_mr(env, 4096, LW, 8)
    post_recv(b, 0x1201, [sge(rv, 0, 4096)])
    post_send(a, 0x1202, e.IBV_WR_RDMA_WRITE, [sge(la, 0, 100)], flags=0,
              rkey=rb.rkey, raddr=rb.buf)
    post_send(a, 0x1203, e.IBV_WR_RDMA_WRITE, [sge(la, 100, 100)], flags=0,
              rkey=rb.rkey, raddr=rb.buf + 1000)
    post_send(a, 0x1204, e.IBV_WR_SEND, [sge(la, 200, 50)], flags=SIG)
    expect(t + ': 2 unsignaled WRITEs + signaled SEND: one CQE, the SEND\'s',
           a.scq, [(0x1204, e.IBV_WC_SUCCESS)], )
    expect_none(t + ': no CQE for the unsignaled WRs', a.scq, 0.5)
    expect(t + ': SEND received', b.rcq, [(0x1201, e.IBV_WC_SUCCESS)])
    want = bytearray(rb_data)
    want[0:100] = src[0:100]
    want[1000:1100] = src[100:200]
    mem_check(t + ': both unsignaled WRITEs landed', rb, bytes(want))
    # Unsignaled alone: still no CQE, the data lands, the SQ slot comes back
    seen = []
    for i in range(3 * 64):	# three times the SQ depth
        post_send(a, 0x1300 + i, e.IBV_WR_RDMA_WRITE, [sge(la, i, 1)],
                  flags=0, rkey=rb.rkey, raddr=rb.buf + 2000 + i)
        if i % 32 == 31:
            post_send(a, 0x1400 + i, e.IBV_WR_RDMA_WRITE, [], flags=SIG,
                      rkey=rb.rkey, raddr=rb.buf)
            got = poll(a.scq, 1)
            seen += [(w.wr_id, w.status) for w in got]
            if not got:
                break
    check(seen == [(0x1400 + i, e.IBV_WC_SUCCESS) for i in range(31, 192, 32)],
          t + ': 192 unsignaled + 6 signaled WRs: exactly the 6 CQEs',
          ['%#x %s' % (i, ST.get(s, s)) for i, s in seen])
    want[2000:2192] = src[0:192]
    mem_check(t + ': 192 unsignaled WRITEs (3 x SQ depth) all landed', rb,
              bytes(want))
    expect_none(t + ': and produced no further CQE', a.scq)
    for m in (rb, la, rv):
        m.close()
    p.close()


@case
def happy_sge(env):
    t = '11 happy multi-SGE'
    p = Pair(env)
    a, b = p.a, p.b
    ra = Region(env, 6 * PAGE, LW | RW | RR, seed=11)
    rb = Region(env, 6 * PAGE, LW | RW | RR, seed=12)
    # Gather from three pieces, two crossing page boundaries
    g = [(PAGE - 96, 200), (2 * PAGE - 2, 5000), (3, 7)]
    gdata = b''.join(ra.map[o:o + n] for o, n in g)
    # Scatter into four, crossing pages differently
    s = [(PAGE - 6, 100), (3 * PAGE - 1000, 2000), (5 * PAGE - 100, 3000),
         (5, 200)]
    post_recv(b, 0x1501, [rb.sge(o, n) for o, n in s])
    post_send(a, 0x1502, e.IBV_WR_SEND, [ra.sge(o, n) for o, n in g])
    expect(t + ': 3-SGE SEND (5207 bytes) completes', a.scq,
           [(0x1502, e.IBV_WC_SUCCESS)])
    wc = expect(t + ': 4-SGE RECV completes', b.rcq,
                [(0x1501, e.IBV_WC_SUCCESS)])
    if wc:
        check(wc[0].byte_len == len(gdata), t + ': byte_len %d' % len(gdata),
              wc_str(wc[0]))
    want = bytearray(rb.data)
    left = gdata
    for o, n in s:
        k = min(n, len(left))
        want[o:o + k] = left[:k]
        left = left[k:]
    check(rb.map[:] == bytes(want), t + ': scattered exactly across pages',
          'mismatch')
    rb.data = bytes(want)
    # WRITE gathered from the same pieces, into one page-crossing range
    post_send(a, 0x1503, e.IBV_WR_RDMA_WRITE, [ra.sge(o, n) for o, n in g],
              rkey=rb.mr.rkey, raddr=rb.addr(PAGE - 10))
    expect(t + ': 3-SGE WRITE completes', a.scq, [(0x1503, e.IBV_WC_SUCCESS)])
    want[PAGE - 10:PAGE - 10 + len(gdata)] = gdata
    check(rb.map[:] == bytes(want), t + ': gathered WRITE data', rb.diff())
    rb.data = bytes(want)
    # READ scattered into pieces of a's region
    post_send(a, 0x1504, e.IBV_WR_RDMA_READ, [ra.sge(o, n) for o, n in s],
              rkey=rb.mr.rkey, raddr=rb.addr(2 * PAGE + 7))
    expect(t + ': 4-SGE READ completes', a.scq, [(0x1504, e.IBV_WC_SUCCESS)])
    total = sum(n for _, n in s)
    src = rb.data[2 * PAGE + 7:2 * PAGE + 7 + total]
    awant = bytearray(ra.data)
    for o, n in s:
        awant[o:o + n] = src[:n]
        src = src[n:]
    check(ra.map[:] == bytes(awant), t + ': READ scattered exactly',
          'mismatch')
    ra.mr.close()
    rb.mr.close()
    p.close()


@case
def happy_big(env):
    t = '11 happy 1 MiB'
    n = 1 << 20
    # PSNs just below the 24-bit wrap: 1024 packets cross it.
    p = Pair(env, a_psn=0xffff00, b_psn=0xfffe80)
    a, b = p.a, p.b
    la = MR(env.pd, n, LW | RW | RR)
    rb = MR(env.pd, n, LW | RW | RR)
    data = os.urandom(n)
    la.write(data, n)
    rb.write(b'\0' * n, n)
    t0 = time.monotonic()
    post_send(a, 0x1601, e.IBV_WR_RDMA_WRITE, [sge(la, 0, n)], rkey=rb.rkey,
              raddr=rb.buf)
    expect(t + ': WRITE completes', a.scq, [(0x1601, e.IBV_WC_SUCCESS)], 60)
    comment('11: 1 MiB WRITE took %.2f s' % (time.monotonic() - t0))
    check(rb.read(n, 0) == data, t + ': WRITE data byte for byte')
    data2 = os.urandom(n)
    rb.write(data2, n)
    t0 = time.monotonic()
    post_send(a, 0x1602, e.IBV_WR_RDMA_READ, [sge(la, 0, n)], rkey=rb.rkey,
              raddr=rb.buf)
    expect(t + ': READ completes', a.scq, [(0x1602, e.IBV_WC_SUCCESS)], 60)
    comment('11: 1 MiB READ took %.2f s' % (time.monotonic() - t0))
    check(la.read(n, 0) == data2, t + ': READ data byte for byte')
    rb.write(b'\0' * n, n)
    post_recv(b, 0x1603, [sge(rb, 0, n)])
    post_send(a, 0x1604, e.IBV_WR_SEND, [sge(la, 0, n)])
    expect(t + ': SEND completes', a.scq, [(0x1604, e.IBV_WC_SUCCESS)], 60)
    wc = expect(t + ': RECV completes', b.rcq, [(0x1603, e.IBV_WC_SUCCESS)],
                60)
    if wc:
        check(wc[0].byte_len == n, t + ': RECV byte_len 1 MiB',
              wc_str(wc[0]))
    check(rb.read(n, 0) == data2, t + ': SEND data byte for byte')
    la.close()
    rb.close()
    p.close()


# --- 1-5, 9. remote access errors ---------------------------------------------

def flush_after(t, side, base):
    """9: a WR posted to a QP in ERR completes with WR_FLUSH_ERR."""
    st = side.state()
    if st != e.IBV_QPS_ERR:
        comment('%s: not checked, the QP is in %s, not ERR' %
                (t, QPS.get(st, st)))
        return
    post_send(side, base, e.IBV_WR_SEND, [])
    post_send(side, base + 1, e.IBV_WR_RDMA_WRITE, [], rkey=0, raddr=0)
    expect(t + ': SEND and WRITE posted in ERR complete WR_FLUSH_ERR',
           side.scq, [(base, e.IBV_WC_WR_FLUSH_ERR),
                      (base + 1, e.IBV_WC_WR_FLUSH_ERR)])


def remote_write_case(env, t, rkey_fn, mr_access=LW | RW | RR,
                      b_access=LW | RW | RR, opcode=e.IBV_WR_RDMA_WRITE,
                      length=64, raddr_fn=None, dereg=False,
                      want=e.IBV_WC_REM_ACCESS_ERR, b_conn=None):
    """A WRITE (or READ) that the responder must refuse, and a SEND queued
    right behind it."""
    p = Pair(env, b_conn=dict(b_conn or {}, access=b_access))
    a, b = p.a, p.b
    tgt = Region(env, 3 * PAGE, mr_access, off=PAGE, length=PAGE, seed=21)
    rv, rv_data = filled_mr(env, 4096, LW, 22)
    la, la_data = filled_mr(env, 8192, LW, 23)
    rkey = tgt.mr.rkey
    bad_key = rkey_fn(tgt)	# before any dereg: a closed MR has no key
    new = None
    if dereg:
        tgt.mr.close()
        # A new MR right away, most likely on the old one's index.
        new = Region(env, 3 * PAGE, LW | RW | RR, off=PAGE, length=PAGE,
                     seed=24)
        comment('%s: old rkey %#x, new MR rkey %#x%s' % (
            t, rkey, new.mr.rkey, ' (same index)' if
            (rkey >> 8) == (new.mr.rkey >> 8) else ''))
    post_recv(b, 0xb1, [sge(rv, 0, 4096)])
    raddr = raddr_fn(tgt) if raddr_fn else tgt.addr(PAGE)
    wr = mk_send(0xa1, opcode, [sge(la, 0, length)], rkey=bad_key,
                 raddr=raddr)
    wr2 = mk_send(0xa2, e.IBV_WR_SEND, [sge(la, 0, 16)])
    a.qp.post_send(wr)
    a.qp.post_send(wr2)
    mems = [('target memory untouched (and the pages around it)',
             tgt.untouched, tgt.diff),
            ('responder\'s receive buffer untouched',
             lambda: rv.read(4096, 0) == rv_data, lambda: 'changed')]
    if new:
        mems.append(('the MR registered after it untouched', new.untouched,
                     new.diff))
    if opcode == e.IBV_WR_RDMA_READ:
        mems.append(('requester\'s READ buffer untouched',
                     lambda: la.read(8192, 0) == la_data,
                     lambda: 'changed'))
    after_error(t, p, (0xa1, want), 0xb1, mems, (0xa2,))
    return p, [tgt.mr, rv, la] + ([new.mr] if new else [])


@case
def no_dest_rd_atomic(env):
    # IBTA: a responder takes at most max_dest_rd_atomic READ and atomic
    # requests at a time; with 0 it takes none (Invalid Request NAK).
    t = '13 READ to a QP with max_dest_rd_atomic 0'
    cleanup(*remote_write_case(env, t, lambda r: r.mr.rkey,
                               opcode=e.IBV_WR_RDMA_READ,
                               want=e.IBV_WC_REM_INV_REQ_ERR,
                               b_conn={'dest_rd_atom': 0}))


@case
def bad_rkey(env):
    t = '1 WRITE bad rkey (key byte)'
    p, mrs = remote_write_case(
        env, t, lambda r: (r.mr.rkey & ~0xff) | ((r.mr.rkey + 0x55) & 0xff))
    # 9: after the error, both QPs flush whatever is posted
    t9 = '9 after REM_ACCESS_ERR'
    flush_after(t9 + ' (requester)', p.a, 0x901)
    flush_after(t9 + ' (responder)', p.b, 0x911)
    buf = mrs[1]
    post_recv(p.a, 0x921, [sge(buf, 0, 64)])
    expect(t9 + ' (requester): RECV posted in ERR completes WR_FLUSH_ERR',
           p.a.rcq, [(0x921, e.IBV_WC_WR_FLUSH_ERR)], 3)
    post_recv(p.b, 0x931, [sge(buf, 0, 64)])
    expect(t9 + ' (responder): RECV posted in ERR completes WR_FLUSH_ERR',
           p.b.rcq, [(0x931, e.IBV_WC_WR_FLUSH_ERR)], 3)
    cleanup(p, mrs)

    t = '1 WRITE bad rkey (no such index)'
    cleanup(*remote_write_case(env, t, lambda r: 0xfffff000 | 0x5a))


@case
def beyond_end(env):
    t = '2 WRITE past the end of the MR'
    # 64 bytes from 32 before the end
    cleanup(*remote_write_case(env, t, lambda r: r.mr.rkey,
                               raddr_fn=lambda r: r.addr(2 * PAGE - 32)))
    t = '2 WRITE starting at the end of the MR'
    cleanup(*remote_write_case(env, t, lambda r: r.mr.rkey, length=1,
                               raddr_fn=lambda r: r.addr(2 * PAGE)))
    t = '2 WRITE starting before the MR'
    cleanup(*remote_write_case(env, t, lambda r: r.mr.rkey, length=64,
                               raddr_fn=lambda r: r.addr(PAGE - 16)))
    # 3000 bytes (3 packets) from 1000 before the end: the first packet
    # alone would fit.
    t = '2 multi-packet WRITE running past the end'
    cleanup(*remote_write_case(env, t, lambda r: r.mr.rkey, length=3000,
                               raddr_fn=lambda r: r.addr(2 * PAGE - 1000)))


@case
def no_remote_write(env):
    t = '3 WRITE into an MR without REMOTE_WRITE'
    cleanup(*remote_write_case(env, t, lambda r: r.mr.rkey,
                               mr_access=LW | RR))
    t = '3 WRITE to a QP without REMOTE_WRITE access'
    cleanup(*remote_write_case(env, t, lambda r: r.mr.rkey,
                               b_access=LW | RR))


@case
def no_remote_read(env):
    t = '4 READ from an MR without REMOTE_READ'
    cleanup(*remote_write_case(env, t, lambda r: r.mr.rkey,
                               mr_access=LW | RW,
                               opcode=e.IBV_WR_RDMA_READ))
    t = '4 READ from a QP without REMOTE_READ access'
    cleanup(*remote_write_case(env, t, lambda r: r.mr.rkey,
                               b_access=LW | RW,
                               opcode=e.IBV_WR_RDMA_READ))


@case
def dereg_rkey(env):
    t = '5 WRITE to a deregistered MR\'s rkey'
    cleanup(*remote_write_case(env, t, lambda r: r.mr.rkey, dereg=True))
    t = '5 READ from a deregistered MR\'s rkey'
    cleanup(*remote_write_case(env, t, lambda r: r.mr.rkey, dereg=True,
                               opcode=e.IBV_WR_RDMA_READ))


# --- 6, 7. RNR ------------------------------------------------------------------

@case
def rnr_zero(env, cnt):
    t = '6 SEND, no receive, rnr_retry 0'
    p = Pair(env, a_conn={'rnr_retry': 0}, b_conn={'min_rnr_timer': 1})
    a, b = p.a, p.b
    la, src = filled_mr(env, 4096, LW, 31)
    rv, rv_data = filled_mr(env, 4096, LW, 32)
    before = cnt.read()
    post_send(a, 0x601, e.IBV_WR_SEND, [sge(la, 0, 32)])
    expect(t + ': requester gets RNR_RETRY_EXC_ERR', a.scq,
           [(0x601, e.IBV_WC_RNR_RETRY_EXC_ERR)])
    state_check(t + ': requester QP in ERR', a, e.IBV_QPS_ERR)
    time.sleep(0.2)
    state_check(t + ': responder QP not in ERR (still RTS)', b,
                e.IBV_QPS_RTS, 0)
    expect_none(t + ': nothing on the responder\'s CQs', b.rcq)
    expect_none(t + ': nothing on the responder\'s send CQ', b.scq, 0)
    d = cnt.delta(before)
    check(d.get('tx_rnr_naks', 0) == 1 and d.get('rx_rnr_naks', 0) == 1,
          t + ': exactly one RNR NAK sent and received', d)
    flush_after('9 after RNR_RETRY_EXC_ERR (requester)', a, 0x611)
    # The responder is still usable: bring the requester back from RESET at
    # the same PSN (the refused SEND never executed) and send again.
    a.qp.modify(QPAttr(qp_state=e.IBV_QPS_RESET), e.IBV_QP_STATE)
    check(a.state() == e.IBV_QPS_RESET, t + ': requester ERR->RESET',
          QPS.get(a.state()))
    connect(env, a, b.qpn, p.a_psn, p.b_psn, rnr_retry=0)
    post_recv(b, 0x621, [sge(rv, 0, 4096)])
    post_send(a, 0x622, e.IBV_WR_SEND, [sge(la, 100, 40)])
    expect(t + ': responder usable: a new SEND completes', a.scq,
           [(0x622, e.IBV_WC_SUCCESS)])
    wc = expect(t + ': responder usable: the SEND is received', b.rcq,
                [(0x621, e.IBV_WC_SUCCESS)])
    if wc:
        check(wc[0].byte_len == 40 and rv.read(40, 0) == src[100:140],
              t + ': responder usable: right length and data',
              wc_str(wc[0]))
    state_check(t + ': responder still RTS', b, e.IBV_QPS_RTS, 0)
    cleanup(p, [la, rv])


@case
def rnr_infinite(env, cnt):
    t = '7 SEND, no receive, rnr_retry 7'
    # min_rnr_timer 14: 1.28 ms between tries
    p = Pair(env, a_conn={'rnr_retry': 7}, b_conn={'min_rnr_timer': 14})
    a, b = p.a, p.b
    la, src = filled_mr(env, 4096, LW, 41)
    rv, _ = filled_mr(env, 4096, LW, 42)
    before = cnt.read()
    post_send(a, 0x701, e.IBV_WR_SEND, [sge(la, 0, 2500)])	# 3 packets
    expect_none(t + ': no completion for 0.5 s without a receive', a.scq, 0.5)
    d = cnt.delta(before)
    n = d.get('rx_rnr_naks', 0)
    comment('7: %d RNR NAKs in the first 0.5 s' % n)
    check(n > 7, t + ': RNR retried past 7 times (infinite)', d)
    post_recv(b, 0x711, [sge(rv, 0, 4096)])
    expect(t + ': SEND completes once a receive is posted', a.scq,
           [(0x701, e.IBV_WC_SUCCESS)])
    wc = expect(t + ': the receive completes', b.rcq,
                [(0x711, e.IBV_WC_SUCCESS)])
    if wc:
        check(wc[0].byte_len == 2500 and rv.read(2500, 0) == src[:2500],
              t + ': byte_len 2500 and the data', wc_str(wc[0]))
    state_check(t + ': requester still RTS', a, e.IBV_QPS_RTS, 0)
    state_check(t + ': responder still RTS', b, e.IBV_QPS_RTS, 0)
    cleanup(p, [la, rv])


# --- 8. retries exhausted -----------------------------------------------------

def retry_exc(env, cnt, t, side, timeout, retry_cnt, mrs, counts=True):
    la = mrs[0]
    before = cnt.read()
    t0 = time.monotonic()
    post_send(side, 0x801, e.IBV_WR_SEND, [sge(la, 0, 64)])
    wc = expect(t + ': requester gets RETRY_EXC_ERR', side.scq,
                [(0x801, e.IBV_WC_RETRY_EXC_ERR)], 15)
    el = time.monotonic() - t0
    tmo = 4.096e-6 * (1 << timeout)
    comment('%s: error after %.3f s (timeout %d is %.1f ms, retry_cnt %d)' %
            (t, el, timeout, tmo * 1e3, retry_cnt))
    if wc:
        check(el < 5.0 and el >= (retry_cnt + 1) * tmo,
              t + ': within 5 s, after at least (retry_cnt + 1) timeouts',
              '%.3f s' % el)
    state_check(t + ': requester QP in ERR', side, e.IBV_QPS_ERR)
    d = cnt.delta(before)
    comment('%s: counters %s' % (t, d))
    if counts:
        check(d.get('ack_timeouts', 0) == retry_cnt + 1 and
              d.get('retransmits', 0) == retry_cnt,
              t + ': %d timeouts, %d retransmissions' % (retry_cnt + 1,
                                                         retry_cnt), d)
    flush_after('9 after RETRY_EXC_ERR (%s)' % t.split(':')[0], side, 0x811)
    return d


@case
def unreachable(env, cnt, blackhole, netdev, multihome):
    la, _ = filled_mr(env, 4096, LW, 51)
    # 8a: an address nobody answers ARP for
    t = '8 unresolvable 198.18.0.200'
    s = Side(env)
    try:
        connect(env, s, 0x123, 0x10, 0x20, dgid=gid_of('198.18.0.200'),
                timeout=8, retry_cnt=2)
    except PyverbsRDMAError as x:
        comment('%s: the AV could not be set: %s (errno %d); fall back on a '
                'destroyed peer QP' % (t, x, x.error_code))
    else:
        comment('%s: the AV was accepted' % t)
        retry_exc(env, cnt, t, s, 8, 2, [la], counts=False)
    s.close()

    # 8b: a neighbour entry the caller made, on a wire nobody listens on
    if blackhole:
        t = '8 peer %s silent on the wire' % blackhole
        s = Side(env)
        connect(env, s, 0x123, 0x10, 0x20, dgid=gid_of(blackhole),
                timeout=10, retry_cnt=2)
        retry_exc(env, cnt, t, s, 10, 2, [la])
        s.close()

    # 8d: the QP's source address goes away once it is connected: each
    # packet is lost as on a wire (tx_no_route), so the ACK timeout and the
    # retry count end the WQE as they would for a silent peer.
    if netdev:
        t = '8 source address %s removed' % SECOND
        s = Side(env)
        route_up(netdev)
        idx = second_up(env.dev, netdev)
        try:
            connect(env, s, 0x123, 0x10, 0x20, dgid=gid_of(UNROUTED),
                    timeout=8, retry_cnt=2, sgid_index=idx)
        finally:
            second_down(netdev)
            route_down(netdev)
        d = retry_exc(env, cnt, t, s, 8, 2, [la])
        check(d.get('tx_no_route', 0) == 3,
              t + ': its 3 packets counted in tx_no_route', d)
        s.close()

    # 8e: a host with two interfaces, a sroce device on each: what a QP of
    # the second sends leaves by the second's netdev, where ib_core
    # resolved the peer, not by the first's, where the route table points.
    if multihome and blackhole:
        dev2, netdev2, ip2 = multihome.split(',')
        t = '8 from %s on %s, a second interface' % (ip2, netdev2)
        env2 = Env(dev2, ip2)
        s = Side(env2)
        la2, _ = filled_mr(env2, 4096, LW, 53)
        connect(env2, s, 0x123, 0x10, 0x20, dgid=gid_of(blackhole),
                timeout=8, retry_cnt=2)
        tx0 = tx_packets(netdev2)
        retry_exc(env2, Counters(dev2), t, s, 8, 2, [la2])
        n = tx_packets(netdev2) - tx0
        check(n == 3, t + ': its 3 packets left by %s' % netdev2,
              '%d packets' % n)
        s.close()
        la2.close()
        env2.pd.close()
        env2.ctx.close()

    # 8c: the peer QP is destroyed, so its QPN no longer exists here
    t = '8 destroyed peer QP'
    p = Pair(env, a_conn={'timeout': 8, 'retry_cnt': 2})
    gone = p.b.qpn
    p.b.close()
    d = retry_exc(env, cnt, t, p.a, 8, 2, [la])
    check(d.get('rx_drop_no_qp', 0) == 3,
          t + ': its 3 packets counted in rx_drop_no_qp', d)
    comment('8: destroyed QPN %#x' % gone)
    p.a.close()
    la.close()


# --- 10. receive too small ------------------------------------------------------

@case
def recv_too_small(env):
    for t, n, rlen in (('10 SEND 200 bytes into a 64-byte receive', 200, 64),
                       ('10 3-packet SEND into a 2000-byte receive', 3000,
                        2000)):
        p = Pair(env)
        a, b = p.a, p.b
        la, _ = filled_mr(env, 4096, LW, 61)
        rv, rv_data = filled_mr(env, 4096, LW, 62)
        post_recv(b, 0xa01, [sge(rv, 0, rlen)])
        post_recv(b, 0xa02, [sge(rv, 2048 if rlen < 2048 else 2000, 64)])
        post_send(a, 0xa11, e.IBV_WR_SEND, [sge(la, 0, n)])
        expect(t + ': requester gets REM_INV_REQ_ERR', a.scq,
               [(0xa11, e.IBV_WC_REM_INV_REQ_ERR)])
        state_check(t + ': requester QP in ERR', a, e.IBV_QPS_ERR)
        expect(t + ': responder recv LOC_LEN_ERR, next recv WR_FLUSH_ERR',
               b.rcq, [(0xa01, e.IBV_WC_LOC_LEN_ERR),
                       (0xa02, e.IBV_WC_WR_FLUSH_ERR)])
        state_check(t + ': responder QP in ERR', b, e.IBV_QPS_ERR)
        cur = rv.read(4096, 0)
        check(cur[rlen:] == rv_data[rlen:],
              t + ': nothing written past the receive buffer')
        flush_after('9 after LOC_LEN_ERR (responder, %d bytes)' % n, b,
                    0xa21)
        cleanup(p, [la, rv])


@case
def recv_cq_overrun(env, cnt):
    # The receive CQ holds a few completions and nobody polls it: the
    # receive that finds it full cannot be reported, so the responder
    # must not acknowledge it (Remote Operational Error NAK) and goes to
    # ERR, as does the requester.
    t = '14 SENDs overrunning the responder\'s receive CQ'
    n = 32
    p = Pair(env, b_kw={'rcq_size': 4})
    a, b = p.a, p.b
    la, _ = filled_mr(env, 4096, LW, 71)
    rv, _ = filled_mr(env, 4096, LW, 72)
    for i in range(n):
        post_recv(b, 0xe00 + i, [sge(rv, 64 * i, 64)])
    before = cnt.read()
    for i in range(n):
        post_send(a, 0xf00 + i, e.IBV_WR_SEND, [sge(la, 0, 16)])
    got = poll(a.scq, n)
    sts = [(w.wr_id, w.status) for w in got]
    k = next((i for i, w in enumerate(got) if w.status != e.IBV_WC_SUCCESS),
             len(got))
    want = ([(0xf00 + i, e.IBV_WC_SUCCESS) for i in range(k)] +
            [(0xf00 + k, e.IBV_WC_REM_OP_ERR)] +
            [(0xf00 + i, e.IBV_WC_WR_FLUSH_ERR) for i in range(k + 1, n)])
    check(0 < k < n and sts == want,
          t + ': requester gets SUCCESS for what the CQ holds, then '
          'REM_OP_ERR, then WR_FLUSH_ERR',
          'got [%s]' % '; '.join(wc_str(w) for w in got))
    state_check(t + ': requester QP in ERR', a, e.IBV_QPS_ERR)
    state_check(t + ': responder QP in ERR', b, e.IBV_QPS_ERR)
    rgot = poll(b.rcq, n, 1.0)
    check([(w.wr_id, w.status) for w in rgot[:k]] ==
          [(0xe00 + i, e.IBV_WC_SUCCESS) for i in range(k)],
          t + ': the responder\'s CQ holds the %d receives acknowledged' % k,
          'got [%s]' % '; '.join(wc_str(w) for w in rgot))
    d = cnt.delta(before)
    check(d.get('cq_overflow', 0) >= 1, t + ': cq_overflow counted', str(d))
    cleanup(p, [la, rv])


# The driver stops looking at the RQ ring of a QP left in ERR after this
# long with nothing new (SROCE_ERR_POLL_FOR, 10 s, then up to 1 s to the
# last poll), and looks again when the CQ is armed or the QP is used.
PARK_SECS = 12.5


def park():
    """Wait until the driver stops polling an idle RQ ring; no verb may
    touch the QP or its receive CQ meanwhile."""
    time.sleep(PARK_SECS)


@case
def err_rq_parks(env):
    # The rxe provider posts receives without entering the kernel, so the
    # driver polls the RQ ring of a user QP in ERR to flush them; with many
    # such QPs that polling must not go on forever. It stops after a while
    # and starts again when a verb that reaches the kernel shows the
    # consumer is waiting: arming the receive CQ, querying the QP.
    t = '15 receives posted to a QP left in ERR'
    p = Pair(env)
    b = p.b
    b.qp.modify(QPAttr(qp_state=e.IBV_QPS_ERR), e.IBV_QP_STATE)
    post_recv(b, 0x150, [])
    expect(t + ': one posted at once is flushed (polled)', b.rcq,
           [(0x150, e.IBV_WC_WR_FLUSH_ERR)])
    park()
    post_recv(b, 0x151, [])
    expect_none(t + ': after %g s idle the RQ is no longer polled' %
                PARK_SECS, b.rcq, 2.5)
    b.qp.query(e.IBV_QP_STATE)
    expect(t + ': querying the QP flushes it', b.rcq,
           [(0x151, e.IBV_WC_WR_FLUSH_ERR)])
    park()
    post_recv(b, 0x152, [])
    post_recv(b, 0x153, [])
    expect_none(t + ': parked again', b.rcq, 2.5)
    # Anyone's `rdma resource show qp` queries every QP (with no mask):
    # that is not the consumer waiting, and must not undo the parking.
    for _ in range(3):
        subprocess.run(['rdma', 'resource', 'show', 'qp'], check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    expect_none(t + ': `rdma resource show qp` leaves it parked', b.rcq, 2.5)
    b.rcq.req_notify()
    expect(t + ': arming the receive CQ flushes both', b.rcq,
           [(0x152, e.IBV_WC_WR_FLUSH_ERR), (0x153, e.IBV_WC_WR_FLUSH_ERR)])
    post_recv(b, 0x154, [])
    expect(t + ': polled again: the next is flushed unprompted', b.rcq,
           [(0x154, e.IBV_WC_WR_FLUSH_ERR)])
    state_check(t + ': the QP is still in ERR', b, e.IBV_QPS_ERR)
    p.close()


def main():
    args, env, t0 = start(('--blackhole', {}), ('--netdev', {}),
                          ('--multihome', {'help': 'DEV,NETDEV,IP: a '
                                           'second device to send from'}))
    if not env:
        return 1
    comment('GID index %d, active MTU enum %d, rd_atom %d' %
            (env.gid_index, env.port_mtu, env.rd_atom))
    cnt = Counters(args.dev)
    qp_state_machine(env)
    happy_send(env)
    happy_write(env)
    happy_write_imm(env)
    happy_read(env)
    happy_inline(env)
    happy_zero(env)
    happy_unsignaled(env)
    happy_sge(env)
    happy_big(env)
    bad_rkey(env)
    beyond_end(env)
    no_remote_write(env)
    no_remote_read(env)
    dereg_rkey(env)
    no_dest_rd_atomic(env)
    rnr_zero(env, cnt)
    rnr_infinite(env, cnt)
    unreachable(env, cnt, args.blackhole, args.netdev, args.multihome)
    recv_too_small(env)
    recv_cq_overrun(env, cnt)
    err_rq_parks(env)
    return env.finish('rc_errors.py', t0)


if __name__ == '__main__':
    sys.exit(main())
