#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Two RC QPs of one device whose path MTUs differ (1024 and 4096, each
way round), moving SENDs, RDMA WRITEs and RDMA READs of 16 KiB with every
byte checked.

usage: mtu_mismatch.py DEV --ip A.B.C.D   (the netdev's MTU at least 4200)

Between QPs of one host a packet may stand for many path-MTU packets, its
PSNs counted in the sender's path MTU. QPs that disagree on it must fail
as they would over a wire: an error completion at the requester (an
invalid request NAK, or READ responses dropped until the retries run
out). Each operation may end in an error completion, or in success with
every byte where it belongs; never in no completion within the deadline,
and never in success with bytes missing or misplaced. The same QPs at one
path MTU are the control: success and the right bytes.
"""
import sys

from sroce_lib import (INIT_MASK, LW, RR, RTR_MASK, RTS_MASK, RW, ST, Side,
                       check, comment, e, filled_mr, init_attr, poll,
                       post_recv, post_send, rtr_attr, rts_attr, sge, start,
                       wc_str)

SIZE = 16384
MTUS = {1024: e.IBV_MTU_1024, 4096: e.IBV_MTU_4096}
# Timeout 14 (67 ms) and 3 retries: a dropped READ response ends the
# request in well under a second; 20 s is far beyond any of it.
SECS = 20


def pair(env, req_mtu, resp_mtu):
    """Requester a at path MTU req_mtu, responder b at resp_mtu."""
    a, b = Side(env), Side(env)
    for x, y, mtu, sq, rq in ((a, b, req_mtu, 0x100, 0x900),
                              (b, a, resp_mtu, 0x900, 0x100)):
        x.qp.modify(init_attr(LW | RW | RR), INIT_MASK)
        x.qp.modify(rtr_attr(env, y.qpn, env.gid, rq, mtu=MTUS[mtu]),
                    RTR_MASK)
        x.qp.modify(rts_attr(env, sq, timeout=14, retry_cnt=3), RTS_MASK)
    return a, b


def one(env, op, req_mtu, resp_mtu):
    t = '%s %d B, requester path MTU %d, responder %d' % (
        op, SIZE, req_mtu, resp_mtu)
    a, b = pair(env, req_mtu, resp_mtu)
    src, src_data = filled_mr(env, SIZE, LW | RW | RR, 11)
    dst, dst_data = filled_mr(env, SIZE, LW | RW | RR, 12)
    try:
        # The data moves from src to dst; dst is a's for READ, b's else.
        if op == 'SEND':
            post_recv(b, 7, [sge(dst, 0, SIZE)])
            post_send(a, 1, e.IBV_WR_SEND, [sge(src, 0, SIZE)])
        elif op == 'WRITE':
            post_send(a, 1, e.IBV_WR_RDMA_WRITE, [sge(src, 0, SIZE)],
                      rkey=dst.rkey, raddr=dst.buf)
        else:
            post_send(a, 1, e.IBV_WR_RDMA_READ, [sge(dst, 0, SIZE)],
                      rkey=src.rkey, raddr=src.buf)
        wcs = poll(a.scq, 1, SECS)
        if not wcs:
            check(False, t + ': the requester completes', 'none in %d s'
                  % SECS)
            return
        wc = wcs[0]
        got = dst.read(SIZE, 0)
        if op == 'SEND' and wc.status == e.IBV_WC_SUCCESS:
            rwc = poll(b.rcq, 1, SECS)
            check(len(rwc) == 1 and rwc[0].status == e.IBV_WC_SUCCESS and
                  rwc[0].byte_len == SIZE,
                  t + ': a SEND that succeeded was received whole',
                  '; '.join(wc_str(w) for w in rwc) or 'no receive')
        if req_mtu == resp_mtu:
            check(wc.status == e.IBV_WC_SUCCESS and got == src_data,
                  t + ': succeeds, every byte in place', '%s, %s' % (
                      wc_str(wc), 'data right' if got == src_data else
                      'data wrong'))
        elif wc.status == e.IBV_WC_SUCCESS:
            check(got == src_data, t + ': succeeded, so every byte is '
                  'in place', 'data wrong')
        else:
            check(True, t + ': fails (%s)' % ST.get(wc.status, wc.status))
            comment('%s: %s; destination %s' % (
                t, wc_str(wc), 'changed' if got != dst_data else
                'untouched'))
    finally:
        for o in (a, b):
            o.close()
        for m in (src, dst):
            m.close()


def main():
    _, env, t0 = start()
    if not env:
        return 1
    check(env.port_mtu >= e.IBV_MTU_4096, 'active MTU 4096 (netdev MTU '
          'large enough)', 'active_mtu enum %d' % env.port_mtu)
    for op in ('SEND', 'WRITE', 'READ'):
        for req_mtu, resp_mtu in ((1024, 4096), (4096, 1024), (4096, 4096),
                                  (1024, 1024)):
            one(env, op, req_mtu, resp_mtu)
    return env.finish('mtu_mismatch.py', t0)


if __name__ == '__main__':
    sys.exit(main())
