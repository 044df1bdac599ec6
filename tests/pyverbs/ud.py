#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""UD QPs of one device talking to each other (the driver's local
delivery), through the stock rxe provider, over the RoCE v2 GID of the
guest's IPv4 address and over that of its IPv6 address: SEND and
SEND_WITH_IMM, the receive completion (opcode, byte_len = 40 + payload,
src_qp, the GRH flag, imm), the 40-byte GRH area at the start of each
receive buffer byte by byte, the Q_Key check (a datagram with another
Q_Key is dropped and leaves the receive WQE for the next one), a message
of exactly the port MTU and one byte more (LOC_LEN_ERR on the sender),
and a receive buffer too small for 40 + payload (LOC_LEN_ERR on that
receive; the next datagram takes the next one).

usage: ud.py DEV --ip A.B.C.D --ip6 IPV6
"""
import argparse
import ipaddress
import sys
import time

from pyverbs.pyverbs_error import PyverbsRDMAError
from sroce_lib import (Counters, Env, GRH, HOP, LW, QKEY, QPS, UDSide,
                       UNROUTED, case, check, comment, e, expect, expect_none,
                       filled_mr, find_gid_index, gid6_of, gid_of, make_ah,
                       mtu_bytes, post_recv, route_down, route_up,
                       second_down, second_up, sge, ud_send, wc_str)


def roce_len(n, imm):
    """BTH + DETH (+ ImmDt) + payload + pad + ICRC of a UD SEND."""
    return 12 + 8 + (4 if imm else 0) + n + (-n & 3) + 4


def grh_want(fam, src, dst, n, imm):
    """The 40-byte GRH area a UD receive must start with, and a mask of
    the bytes checked (the IPv4 header's ID, flags and checksum and the
    IPv6 traffic class and flow label are not)."""
    w = bytearray(GRH)
    m = bytearray(GRH)
    ln = 8 + roce_len(n, imm)	# UDP header and what follows
    if fam == 4:
        h = 20
        w[h] = 0x45
        w[h + 2:h + 4] = (20 + ln).to_bytes(2, 'big')
        w[h + 8] = HOP
        w[h + 9] = 17
        w[h + 12:h + 16] = src
        w[h + 16:h + 20] = dst
        for i in list(range(0, 20)) + [h, h + 2, h + 3, h + 8, h + 9] + \
                list(range(h + 12, h + 20)):
            m[i] = 1
    else:
        w[0] = 0x60
        w[4:6] = ln.to_bytes(2, 'big')
        w[6] = 17
        w[7] = HOP
        w[8:24] = src
        w[24:40] = dst
        for i in [4, 5, 6, 7] + list(range(8, 40)):
            m[i] = 1
    return w, m


def grh_check(name, got, fam, src, dst, n, imm):
    want, mask = grh_want(fam, src, dst, n, imm)
    bad = ['[%d]=%#04x want %#04x' % (i, got[i], want[i])
           for i in range(GRH) if mask[i] and got[i] != want[i]]
    if fam == 6 and got[0] >> 4 != 6:
        bad.insert(0, 'version %d' % (got[0] >> 4))
    check(not bad, name, ', '.join(bad[:12]) + ' (got %s)' % got.hex())


class Fam:
    """One address family: its GID, GID index and raw address."""

    def __init__(self, env, fam, ip):
        self.fam = fam
        if fam == 4:
            self.gid = '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' % \
                tuple(int(x) for x in ip.split('.'))
            self.raw = ipaddress.IPv4Address(ip).packed
        else:
            self.gid = gid6_of(ip)
            self.raw = ipaddress.IPv6Address(ip).packed
        self.index = find_gid_index(env.dev, self.gid)
        self.name = 'IPv%d' % fam


@case
def basic(env, f):
    t = 'U1 %s' % f.name
    a, b = UDSide(env), UDSide(env)
    ah = make_ah(env, f.gid, f.index)
    la, src = filled_mr(env, 8192, LW, 11)
    rv, rv_data = filled_mr(env, 8192, LW, 12)
    for k, (n, imm) in enumerate(((100, None), (33, 0x12345678),
                                  (0, 0x0badcafe), (1, None))):
        tt = '%s SEND%s %d bytes' % (t, '' if imm is None else '_WITH_IMM', n)
        off = 2048 * (k % 4)
        post_recv(b, 0x100 + k, [sge(rv, off, 2048)])
        ud_send(a, 0x200 + k, [sge(la, 10 * k, n)], ah, b.qpn, imm=imm)
        ws = expect(tt + ': send completes', a.scq,
                    [(0x200 + k, e.IBV_WC_SUCCESS)])
        if ws:
            check(ws[0].opcode == e.IBV_WC_SEND, tt + ': send wc opcode SEND',
                  wc_str(ws[0]))
        wr = expect(tt + ': received', b.rcq,
                    [(0x100 + k, e.IBV_WC_SUCCESS)])
        if not wr:
            continue
        w = wr[0]
        check(w.opcode == e.IBV_WC_RECV and w.byte_len == GRH + n and
              w.src_qp == a.qpn and w.qp_num == b.qpn and
              bool(w.wc_flags & e.IBV_WC_WITH_IMM) == (imm is not None) and
              (imm is None or w.imm_data == imm),
              tt + ': recv wc: opcode RECV, byte_len %d, src_qp %#x, qp_num'
              '%s' % (GRH + n, a.qpn, ', no WITH_IMM' if imm is None else
                      ', WITH_IMM and imm_data'), wc_str(w))
        check(w.wc_flags & e.IBV_WC_GRH, tt + ': recv wc: GRH flag',
              wc_str(w))
        # The RoCEv2 network header type, where mlx5 and UCX have it.
        check(w.sl == (2 if f.fam == 4 else 1),
              tt + ': recv wc: sl %d (IPv%d)' % (2 if f.fam == 4 else 1,
                                                 f.fam), 'sl %d' % w.sl)
        got = rv.read(2048, off)
        check(got[GRH:GRH + n] == src[10 * k:10 * k + n],
              tt + ': payload after the 40-byte GRH area')
        grh_check(tt + ': GRH area', got[:GRH], f.fam, f.raw, f.raw, n,
                  imm is not None)
        check(got[GRH + n:] == rv_data[off + GRH + n:off + 2048],
              tt + ': nothing written past 40 + payload')

    # The GRH in an SGE of its own, the payload in two more.
    tt = t + ' SEND 300 bytes into 3 SGEs (40, 100, 1000)'
    rv2, _ = filled_mr(env, 4096, LW, 13)
    post_recv(b, 0x300, [sge(rv2, 0, GRH), sge(rv2, 1000, 100),
                         sge(rv2, 2000, 1000)])
    ud_send(a, 0x301, [sge(la, 0, 100), sge(la, 4000, 200)], ah, b.qpn)
    expect(tt + ': send completes', a.scq, [(0x301, e.IBV_WC_SUCCESS)])
    wr = expect(tt + ': received', b.rcq, [(0x300, e.IBV_WC_SUCCESS)])
    if wr:
        check(wr[0].byte_len == GRH + 300, tt + ': byte_len 340',
              wc_str(wr[0]))
        want = src[0:100] + src[4000:4200]
        got = rv2.read(100, 1000) + rv2.read(200, 2000)
        check(got == want, tt + ': payload spread over the SGEs')
        grh_check(tt + ': GRH area', rv2.read(GRH, 0), f.fam, f.raw, f.raw,
                  300, False)
    for o in (a, b):
        o.close()
    for o in (ah, la, rv, rv2):
        o.close()


@case
def qkey(env, f):
    t = 'U2 Q_Key'
    a, b = UDSide(env), UDSide(env)
    c = UDSide(env, qkey=0x0c0c0c0c)
    ah = make_ah(env, f.gid, f.index)
    la, src = filled_mr(env, 4096, LW, 21)
    rv, rv_data = filled_mr(env, 4096, LW, 22)
    post_recv(b, 0x401, [sge(rv, 0, 2048)])
    ud_send(a, 0x402, [sge(la, 0, 64)], ah, b.qpn, qkey=QKEY ^ 1)
    expect(t + ' wrong in the WR: the send completes', a.scq,
           [(0x402, e.IBV_WC_SUCCESS)])
    expect_none(t + ' wrong in the WR: nothing received in 1 s', b.rcq, 1.0)
    check(rv.read(4096, 0) == rv_data,
          t + ' wrong in the WR: receive buffer untouched')
    # High bit set: the sending QP's own Q_Key. c's differs from b's.
    ud_send(c, 0x403, [sge(la, 0, 64)], ah, b.qpn, qkey=0x80000000)
    expect(t + ' high bit, sender\'s own Q_Key differs: send completes',
           c.scq, [(0x403, e.IBV_WC_SUCCESS)])
    expect_none(t + ' high bit, sender\'s own Q_Key differs: nothing '
                'received in 1 s', b.rcq, 1.0)
    ud_send(a, 0x404, [sge(la, 100, 77)], ah, b.qpn)
    expect(t + ' right: send completes', a.scq, [(0x404, e.IBV_WC_SUCCESS)])
    wr = expect(t + ' right: the same receive WQE takes it', b.rcq,
                [(0x401, e.IBV_WC_SUCCESS)])
    if wr:
        check(wr[0].byte_len == GRH + 77 and
              rv.read(77, GRH) == src[100:177],
              t + ' right: byte_len 117 and the payload', wc_str(wr[0]))
    # a's own Q_Key is b's: the high bit makes the send use it.
    post_recv(b, 0x405, [sge(rv, 2048, 2048)])
    ud_send(a, 0x406, [sge(la, 200, 50)], ah, b.qpn, qkey=0xffffffff)
    expect(t + ' high bit, sender\'s own Q_Key matches: send completes',
           a.scq, [(0x406, e.IBV_WC_SUCCESS)])
    wr = expect(t + ' high bit, sender\'s own Q_Key matches: received',
                b.rcq, [(0x405, e.IBV_WC_SUCCESS)])
    if wr:
        check(wr[0].byte_len == GRH + 50 and
              rv.read(50, 2048 + GRH) == src[200:250],
              t + ' high bit, own Q_Key matches: payload', wc_str(wr[0]))
    q = b.qp.query(e.IBV_QP_QKEY)[0]
    check(q.qkey == QKEY, t + ': query_qp returns the Q_Key of INIT',
          '%#x' % q.qkey)
    for o in (a, b, c):
        o.close()
    for o in (ah, la, rv):
        o.close()


@case
def mtu(env, f):
    m = mtu_bytes(env.port_mtu)
    t = 'U3 MTU %d' % m
    a, b = UDSide(env), UDSide(env)
    ah = make_ah(env, f.gid, f.index)
    la, src = filled_mr(env, 8192, LW, 31)
    rv, rv_data = filled_mr(env, 8192, LW, 32)
    post_recv(b, 0x501, [sge(rv, 0, GRH + m)])
    ud_send(a, 0x502, [sge(la, 3, m)], ah, b.qpn)
    expect(t + ': a message of exactly the MTU completes', a.scq,
           [(0x502, e.IBV_WC_SUCCESS)])
    wr = expect(t + ': and is received', b.rcq, [(0x501, e.IBV_WC_SUCCESS)])
    if wr:
        check(wr[0].byte_len == GRH + m and
              rv.read(m, GRH) == src[3:3 + m],
              t + ': byte_len 40 + MTU and the payload', wc_str(wr[0]))
    rv.write(rv_data, 8192)
    post_recv(b, 0x503, [sge(rv, 0, 8192)])
    try:
        ud_send(a, 0x504, [sge(la, 0, m + 1)], ah, b.qpn)
    except PyverbsRDMAError as x:
        check(False, t + ' + 1: posted', 'errno %d' % x.error_code)
    else:
        expect(t + ' + 1: the send completes LOC_LEN_ERR', a.scq,
               [(0x504, e.IBV_WC_LOC_LEN_ERR)])
    expect_none(t + ' + 1: nothing received', b.rcq, 0.5)
    check(rv.read(8192, 0) == rv_data, t + ' + 1: receive buffer untouched')
    comment('%s + 1: the sender is in %s afterwards' %
            (t, QPS.get(a.state(), a.state())))
    # Two SGEs that add up to MTU + 1.
    a2 = UDSide(env)
    ud_send(a2, 0x505, [sge(la, 0, m), sge(la, 5000, 1)], ah, b.qpn)
    expect(t + ' + 1 in two SGEs: the send completes LOC_LEN_ERR', a2.scq,
           [(0x505, e.IBV_WC_LOC_LEN_ERR)])
    expect_none(t + ' + 1 in two SGEs: nothing received', b.rcq, 0.5)
    # The receiver takes a right-sized one from a new sender.
    a3 = UDSide(env)
    ud_send(a3, 0x506, [sge(la, 0, 10)], ah, b.qpn)
    expect(t + ': afterwards a new sender\'s SEND completes', a3.scq,
           [(0x506, e.IBV_WC_SUCCESS)])
    expect(t + ': and lands in the receive posted before', b.rcq,
           [(0x503, e.IBV_WC_SUCCESS)])
    for o in (a, a2, a3, b):
        o.close()
    for o in (ah, la, rv):
        o.close()


@case
def small_recv(env, f):
    t = 'U4 receive too small'
    a, b = UDSide(env), UDSide(env)
    ah = make_ah(env, f.gid, f.index)
    la, src = filled_mr(env, 4096, LW, 41)
    rv, rv_data = filled_mr(env, 4096, LW, 42)
    for k, (rlen, n) in enumerate(((GRH + 99, 100), (GRH - 1, 0),
                                   (20, 64))):
        tt = '%s: %d bytes for 40 + %d' % (t, rlen, n)
        post_recv(b, 0x601 + k, [sge(rv, 0, rlen)])
        post_recv(b, 0x611 + k, [sge(rv, 2048, 2048)])
        ud_send(a, 0x621 + k, [sge(la, 0, n)], ah, b.qpn)
        expect(tt + ': the send completes', a.scq,
               [(0x621 + k, e.IBV_WC_SUCCESS)])
        expect(tt + ': that receive completes LOC_LEN_ERR, alone', b.rcq,
               [(0x601 + k, e.IBV_WC_LOC_LEN_ERR)])
        cur = rv.read(4096, 0)
        check(cur[rlen:] == rv_data[rlen:],
              tt + ': nothing written past the receive buffer')
        st = b.state()
        check(st == e.IBV_QPS_RTS, tt + ': receiver still RTS',
              QPS.get(st, st))
        ud_send(a, 0x631 + k, [sge(la, 500, 200)], ah, b.qpn)
        expect(tt + ': the next datagram completes', a.scq,
               [(0x631 + k, e.IBV_WC_SUCCESS)])
        wr = expect(tt + ': the next datagram takes the next receive',
                    b.rcq, [(0x611 + k, e.IBV_WC_SUCCESS)])
        if wr:
            check(wr[0].byte_len == GRH + 200 and
                  rv.read(200, 2048 + GRH) == src[500:700],
                  tt + ': the next datagram: byte_len 240 and payload',
                  wc_str(wr[0]))
        rv.write(rv_data, 4096)
    for o in (a, b):
        o.close()
    for o in (ah, la, rv):
        o.close()


@case
def unrouted(env, f, netdev):
    """A datagram whose source address went away after its AH was made is
    lost, as on a wire, and completes; the send queue goes on."""
    t = 'U5 source address gone'
    a, b = UDSide(env), UDSide(env)
    cnt = Counters(env.dev)
    route_up(netdev)
    idx = second_up(env.dev, netdev)
    try:
        far = make_ah(env, gid_of(UNROUTED), idx)
    finally:
        second_down(netdev)
        route_down(netdev)
    ah = make_ah(env, f.gid, f.index)
    la, _ = filled_mr(env, 4096, LW, 51)
    rv, _ = filled_mr(env, 4096, LW, 52)
    before = cnt.read()
    post_recv(b, 0x701, [sge(rv, 0, 2048)])
    ud_send(a, 0x702, [sge(la, 0, 64)], far, 0x123)
    ud_send(a, 0x703, [sge(la, 0, 64)], ah, b.qpn)
    expect(t + ': both sends complete, in order', a.scq,
           [(0x702, e.IBV_WC_SUCCESS), (0x703, e.IBV_WC_SUCCESS)])
    expect(t + ': the second datagram is received', b.rcq,
           [(0x701, e.IBV_WC_SUCCESS)])
    d = cnt.delta(before)
    check(d.get('tx_no_route', 0) == 1,
          t + ': the first counted in tx_no_route', d)
    for o in (a, b):
        o.close()
    for o in (far, ah, la, rv):
        o.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('dev')
    ap.add_argument('--ip', required=True)
    ap.add_argument('--ip6', required=True)
    ap.add_argument('--netdev', help="the device's netdev, for U5")
    args = ap.parse_args()
    t0 = time.monotonic()
    env = Env(args.dev, args.ip)
    fams = [Fam(env, 4, args.ip), Fam(env, 6, args.ip6)]
    for f in fams:
        check(f.index is not None, '%s RoCE v2 GID %s found in sysfs' %
              (f.name, f.gid))
    if any(f.index is None for f in fams):
        return 1
    comment('GID indexes %s, active MTU %d' % (
        ', '.join('%s %d' % (f.name, f.index) for f in fams),
        mtu_bytes(env.port_mtu)))
    for f in fams:
        basic(env, f)
    qkey(env, fams[0])
    mtu(env, fams[1])
    small_recv(env, fams[0])
    if args.netdev:
        unrouted(env, fams[0], args.netdev)
    return env.finish('ud.py', t0)


if __name__ == '__main__':
    sys.exit(main())
