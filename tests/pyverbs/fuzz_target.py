#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The two ends of tests/guest/fuzz.sh around tools/sroce-fuzz.

  fuzz_target.py target DEV --ip A.B.C.D [--ip6 IP6] --peer A.B.C.D
                 --sync DIR --counter TOOL
  fuzz_target.py peer DEV --ip A.B.C.D --sync DIR

The target guest creates what the fuzzer aims at: RC QPs in RESET, INIT,
RTR, RTS (one on an SRQ) and ERR, a UC and a UD QP, all with receives
posted, their peer a QP number on the other guest that no verbs QP owns
(the fuzzer captures what they send it: their READ responses and atomic
ACKs); MRs with remote access, each in the middle of a bigger mapping
whose bytes on either side are a guard pattern; and a live RC connection
to the peer guest's QP (the peer role), over which it keeps writing data
and reading it back, every byte checked, before, during and after the
fuzzing. Every 20 ms it takes the RC QPs the fuzzing put in ERR back to
RTR or RTS. It writes DIR/fuzz-target.txt for sroce-fuzz (QPNs, PSNs and
peer QPNs, MRs with their rights; the live QP is marked so that it only
gets frames from the third address), the read-only MR's bytes in
DIR/fuzz-ro.bin, and waits for DIR/fuzz.result, the fuzzer's summary
line.

Then it checks: every guard byte intact (a fuzzed WRITE or atomic with a
valid rkey may change bytes inside an MR, never outside), receive buffers'
guards too; an MR with remote read rights only unchanged, inside too;
the live QPs in RTS and data still verified; and the counters:
at two quiet points (no live traffic in flight) it starts and stops
`sroce-fuzz --count-rx`, which counts every UDP 4791 frame to this
address (and to --ip6, which the fuzzer aims IPv6 frames at) that eth0
took in (fuzzed ones apart, by their TOS or traffic class): rx_packets
must have grown by exactly that many, and, when every fuzzed frame
arrived, rx_icrc_errors, rx_drop_pkey and rx_drop_no_qp by exactly what
the fuzzer predicted, rx_drop_malformed by at least its prediction.
"""
import json
import os
import signal
import subprocess
import sys
import threading
import time

from pyverbs.addr import AH, AHAttr, GID, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr
from pyverbs.wr import RecvWR, SendWR

from sroce_lib import (Counters, Env, INIT_MASK, LW, QPS, RR, RTR_MASK, RW,
                       Region, ST, Side, check, comment, connect, dev_args, e,
                       gid_of, init_attr, mk_send, pattern, poll, post_recv,
                       post_send, role_parsers, rtr_attr, status)


AT = 8			# IBV_ACCESS_REMOTE_ATOMIC
ALL = LW | RW | RR | AT
PAGE = 4096
PEER_QPN = 0xf100	# + index: the fuzz QPs' peer, no QP of its own
QKEY = 0x11111111
LIVE_LEN = 1024		# bytes per live WRITE and READ
PSN = 0x100		# every fuzz QP's rq_psn
SEED_RECVS = 8		# receives the peer posts for the seed traffic


def wait_file(path, secs):
    end = time.monotonic() + secs
    while not os.path.exists(path):
        if time.monotonic() > end:
            return False
        time.sleep(0.2)
    return True


def wait_json(path, what, secs=300):
    """What the other guest published at path, or None (a failed check
    naming what) if it did not within secs."""
    if not wait_file(path, secs):
        check(False, what)
        return None
    with open(path) as f:
        return json.load(f)


def publish(path, obj):
    tmp = path + '.tmp'
    with open(tmp, 'wb' if isinstance(obj, bytes) else 'w') as f:
        if isinstance(obj, (str, bytes)):
            f.write(obj)
        else:
            json.dump(obj, f)
    os.rename(tmp, path)


def ah_attr(env, dgid):
    return AHAttr(gr=GlobalRoute(dgid=GID(dgid), sgid_index=env.gid_index,
                                 hop_limit=64), is_global=1, port_num=1)


# --- the peer guest: one RC QP and an MR the target writes and reads ------

def peer_main(a):
    env = Env(a.dev, a.ip)
    check(env.gid_index is not None, 'peer: IPv4 RoCE v2 GID found')
    side = Side(env)
    reg = Region(env, 4 * PAGE, ALL, seed=21)
    publish(os.path.join(a.sync, 'fuzz-peer.json'),
            dict(qpn=side.qpn, rkey=reg.mr.rkey, va=reg.base,
                 len=4 * PAGE))
    t = wait_json(os.path.join(a.sync, 'fuzz-live.json'),
                  'peer: the target published its live QP')
    if t is None:
        return 1
    connect(env, side, t['qpn'], 0x2000, 0x1000, dgid=gid_of(t['ip']),
            access=ALL, timeout=18)
    # For the target's seed SENDs and WRITEs with immediate.
    rbuf = Region(env, SEED_RECVS * PAGE, LW, seed=22)
    for i in range(SEED_RECVS):
        post_recv(side, i, [rbuf.sge(i * PAGE, PAGE)])
    publish(os.path.join(a.sync, 'fuzz-peer.up'), '')
    wait_file(os.path.join(a.sync, 'fuzz-target.finished'), 3600)
    st = side.state()
    check(st == e.IBV_QPS_RTS, 'peer: the live QP is still in RTS',
          QPS.get(st, st))
    side.close()
    return status()


# --- the target guest -----------------------------------------------------

class Live:
    """The live connection: WRITE a pattern to the peer, READ it back into
    a second buffer, compare; again and again."""

    def __init__(self, env, peer, ip):
        self.side = Side(env, max_wr=16)
        self.peer = peer
        self.ip = ip
        self.src = Region(env, 4 * PAGE, LW, off=PAGE, length=2 * PAGE,
                          seed=31)
        self.dst = Region(env, 4 * PAGE, LW, off=PAGE, length=2 * PAGE,
                          seed=32)
        self.rounds = 0
        self.errors = []
        self.stop = threading.Event()

    def connect(self, env):
        connect(env, self.side, self.peer['qpn'], 0x1000, 0x2000,
                dgid=gid_of(self.ip), access=LW, timeout=18)

    def round(self):
        n = self.rounds
        data = pattern(LIVE_LEN, n & 0xff)
        off = PAGE + (n % 2) * LIVE_LEN
        self.src.map[off:off + LIVE_LEN] = data
        self.dst.map[off:off + LIVE_LEN] = b'\0' * LIVE_LEN
        raddr = self.peer['va'] + (n % 4) * LIVE_LEN
        post_send(self.side, 2 * n, e.IBV_WR_RDMA_WRITE,
                  [self.src.sge(off, LIVE_LEN)], rkey=self.peer['rkey'],
                  raddr=raddr)
        post_send(self.side, 2 * n + 1, e.IBV_WR_RDMA_READ,
                  [self.dst.sge(off, LIVE_LEN)], rkey=self.peer['rkey'],
                  raddr=raddr)
        wcs = poll(self.side.scq, 2, 60.0)
        sts = [wc.status for wc in wcs]
        if sts != [e.IBV_WC_SUCCESS] * 2:
            self.errors.append('round %d: completions %s' % (
                n, [ST.get(s, s) for s in sts]))
            return False
        if self.dst.map[off:off + LIVE_LEN] != data:
            self.errors.append('round %d: READ back differs' % n)
            return False
        self.rounds += 1
        return True

    def run(self):
        try:
            while not self.stop.is_set():
                if not self.round():
                    return
                time.sleep(0.05)
        except Exception as ex:	# pylint: disable=broad-except
            self.errors.append('the live thread stopped: %r' % ex)


class FuzzQPs:
    """The QPs the fuzzer aims at, their MRs and receive buffers."""

    def __init__(self, env, peer_ip):
        self.env = env
        self.cq = CQ(env.ctx, 4096)
        self.qps = []	# (name, qp, type, rq_psn)
        # MRs in the middle of bigger mappings: a page of guard each side.
        self.access = [ALL, LW | RW | RR, LW | RW | AT,
                       # Remote read only: the fuzzer aims WRITEs and
                       # atomics at it like at the others, and none may
                       # change it; its READ responses carry its bytes.
                       LW | RR]
        self.mrs = [Region(env, 4 * PAGE, ALL, off=PAGE, length=2 * PAGE,
                           seed=41),
                    Region(env, 3 * PAGE, LW | RW | RR, off=PAGE,
                           length=PAGE, seed=42),
                    Region(env, 3 * PAGE, LW | RW | AT, off=PAGE + 64,
                           length=PAGE - 128, seed=43),
                    Region(env, 3 * PAGE, LW | RR, off=PAGE, length=PAGE,
                           seed=45)]
        self.ro = self.mrs[-1]
        # Receive buffers: local-only MRs, guarded the same way.
        self.rbuf = Region(env, 8 * PAGE, LW, off=PAGE, length=6 * PAGE,
                           seed=44)
        self.srq = SRQ(env.pd, SrqInitAttr(SrqAttr(max_wr=64, max_sge=1)))
        self.nrecv = 0
        dgid = gid_of(peer_ip)
        for name in ('RESET', 'INIT', 'RTR', 'RTS', 'RTS on an SRQ', 'ERR'):
            srq = self.srq if 'SRQ' in name else None
            qp = QP(env.pd, QPInitAttr(
                qp_type=e.IBV_QPT_RC, scq=self.cq, rcq=self.cq, srq=srq,
                cap=QPCap(max_send_wr=4, max_recv_wr=16)))
            idx = len(self.qps)
            if name != 'RESET':
                qp.modify(init_attr(ALL), INIT_MASK)
            if name in ('RTR', 'RTS', 'RTS on an SRQ', 'ERR'):
                qp.modify(rtr_attr(env, PEER_QPN + idx, dgid, PSN),
                          RTR_MASK)
            if name.startswith('RTS') or name == 'ERR':
                a = QPAttr(qp_state=e.IBV_QPS_RTS)
                a.sq_psn, a.timeout, a.retry_cnt = 0x10, 14, 7
                a.rnr_retry, a.max_rd_atomic = 7, env.rd_atom
                qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_SQ_PSN |
                          e.IBV_QP_TIMEOUT | e.IBV_QP_RETRY_CNT |
                          e.IBV_QP_RNR_RETRY | e.IBV_QP_MAX_QP_RD_ATOMIC)
            if name != 'RESET' and srq is None:
                self.post_recvs(qp, 8)
            if name == 'ERR':
                qp.modify(QPAttr(qp_state=e.IBV_QPS_ERR), e.IBV_QP_STATE)
            self.qps.append((name, qp, 'rc', PSN))
        self.post_recvs(self.srq, 32)
        self.dgid = dgid
        self.recycled = 0
        self.errors = []
        self.completions = 0
        self.refused = 0
        # UC in RTS
        qp = QP(env.pd, QPInitAttr(qp_type=e.IBV_QPT_UC, scq=self.cq,
                                   rcq=self.cq,
                                   cap=QPCap(max_send_wr=4, max_recv_wr=16)))
        qp.modify(init_attr(LW | RW), e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX |
                  e.IBV_QP_PORT | e.IBV_QP_ACCESS_FLAGS)
        a = QPAttr(qp_state=e.IBV_QPS_RTR)
        a.path_mtu = env.port_mtu
        a.dest_qp_num = PEER_QPN + 0x80
        a.rq_psn = PSN
        a.ah_attr = ah_attr(env, dgid)
        qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_AV | e.IBV_QP_PATH_MTU |
                  e.IBV_QP_DEST_QPN | e.IBV_QP_RQ_PSN)
        a = QPAttr(qp_state=e.IBV_QPS_RTS)
        a.sq_psn = 0x10
        qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_SQ_PSN)
        self.post_recvs(qp, 8)
        self.qps.append(('UC in RTS', qp, 'uc', PSN))
        # UD in RTS
        qp = QP(env.pd, QPInitAttr(qp_type=e.IBV_QPT_UD, scq=self.cq,
                                   rcq=self.cq,
                                   cap=QPCap(max_send_wr=4, max_recv_wr=16)))
        a = QPAttr(qp_state=e.IBV_QPS_INIT)
        a.pkey_index, a.port_num, a.qkey = 0, 1, QKEY
        qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX |
                  e.IBV_QP_PORT | e.IBV_QP_QKEY)
        qp.modify(QPAttr(qp_state=e.IBV_QPS_RTR), e.IBV_QP_STATE)
        a = QPAttr(qp_state=e.IBV_QPS_RTS)
        a.sq_psn = 0x10
        qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_SQ_PSN)
        self.post_recvs(qp, 8)
        self.qps.append(('UD in RTS', qp, 'ud', 0))

    def recycler(self, stop):
        """Recycle until @stop, often: the fuzzer's READs and atomics are
        answered only by QPs in RTR or RTS, and its bad ones put them in
        ERR within milliseconds."""
        try:
            while not stop.is_set():
                self.recycle()
                time.sleep(0.02)
        except Exception as ex:	# pylint: disable=broad-except
            self.errors.append('the recycler stopped: %r' % ex)

    def recycle(self):
        """The RC QPs meant to be in RTR or RTS that the fuzzing put in
        ERR (a valid-looking bad request is fatal): back through RESET to
        where they were, receives posted again, so that the fuzzer keeps
        meeting QPs in every state; the SRQ refilled; completions
        reaped."""
        self.reap()
        for idx, (name, qp, t, _) in enumerate(self.qps):
            if t != 'rc' or name in ('RESET', 'INIT', 'ERR'):
                continue
            if qp.query(e.IBV_QP_STATE)[0].qp_state != e.IBV_QPS_ERR:
                continue
            try:
                self.reconnect(idx, name, qp)
            except PyverbsRDMAError:
                # A fuzzed packet put it back in ERR half way: next time.
                self.refused += 1
                continue
            self.recycled += 1
        self.reap()

    def reconnect(self, idx, name, qp):
        qp.modify(QPAttr(qp_state=e.IBV_QPS_RESET), e.IBV_QP_STATE)
        qp.modify(init_attr(ALL), INIT_MASK)
        qp.modify(rtr_attr(self.env, PEER_QPN + idx, self.dgid, PSN),
                  RTR_MASK)
        if name.startswith('RTS'):
            a = QPAttr(qp_state=e.IBV_QPS_RTS)
            a.sq_psn, a.timeout, a.retry_cnt = 0x10, 14, 7
            a.rnr_retry, a.max_rd_atomic = 7, self.env.rd_atom
            qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_SQ_PSN |
                      e.IBV_QP_TIMEOUT | e.IBV_QP_RETRY_CNT |
                      e.IBV_QP_RNR_RETRY | e.IBV_QP_MAX_QP_RD_ATOMIC)
        if 'SRQ' not in name:
            self.post_recvs(qp, 8)

    def reap(self):
        """Poll the CQ; post the SRQ as many receives as it used."""
        sq = [qp.qp_num for n, qp, _, _ in self.qps if 'SRQ' in n]
        wcs = poll(self.cq, 4096, 0.0)
        self.completions += len(wcs)
        used = sum(1 for wc in wcs if wc.qp_num in sq)
        if used:
            self.post_recvs(self.srq, used)

    def post_recvs(self, q, n):
        for _ in range(n):
            # 1 KiB + 64 receive slots, 64 apart from the next
            off = PAGE + (self.nrecv % 5) * 1088
            self.nrecv += 1
            q.post_recv(RecvWR(wr_id=self.nrecv, num_sge=1,
                               sg=[self.rbuf.sge(off, 1088)]))

    def guards_ok(self):
        """(ok, detail): every byte outside every MR as it was."""
        bad = []
        for i, r in enumerate(self.mrs + [self.rbuf]):
            cur = r.map[:]
            end = r.off + r.mr.length
            for lo, hi in ((0, r.off), (end, len(cur))):
                if cur[lo:hi] != r.data[lo:hi]:
                    d = [k for k in range(lo, hi) if cur[k] != r.data[k]]
                    bad.append('region %d: %d guard bytes changed, %d..%d '
                               '(MR at %d..%d)' % (i, len(d), d[0], d[-1],
                                                   r.off, end))
        return not bad, '; '.join(bad)

    def txt(self, live_qpn, sync):
        """sroce-fuzz's --target file; the read-only MR's bytes beside it
        in fuzz-ro.bin."""
        lines = ['pmtu %d' % (128 << self.env.port_mtu), 'qkey %x' % QKEY]
        for idx, (_, qp, t, psn) in enumerate(self.qps):
            # An RC QP's peer: where its READ responses and atomic ACKs go.
            peer = ' %x' % (PEER_QPN + idx) if t == 'rc' else ''
            lines.append('qp %x %x %s x%s' % (qp.qp_num, psn, t, peer))
        lines.append('qp %x %x rc live' % (live_qpn, 0x2000))
        for r, acc in zip(self.mrs, self.access):
            extra = ''
            if r is self.ro:
                publish(os.path.join(sync, 'fuzz-ro.bin'),
                        r.data[r.off:r.off + r.mr.length])
                extra = ' fuzz-ro.bin'
            lines.append('mr %x %x %x %x%s' % (r.base + r.off, r.mr.rkey,
                                             r.mr.length, acc, extra))
        for q in [1, live_qpn] + [qp.qp_num for _, qp, _, _ in self.qps]:
            lines.append('known %x' % q)
        return '\n'.join(lines) + '\n'


def send_seeds(env, live, fq):
    """Every opcode of the target's, on the wire to the peer guest, where
    fuzz.sh captures them as the fuzzer's seeds: on the live RC QP SEND
    and WRITE, with and without immediate, of one packet and of three
    (first, middle, last), READ of one and of three response packets,
    both atomics (with the peer's ACKs, READ responses and atomic ACKs);
    on the UC fuzz QP SEND and WRITE of three packets and with immediate
    of one; on the UD fuzz QP SEND with and without immediate. The UC and
    UD ones go to QP numbers on the peer that nobody owns. Returns (ok,
    what went wrong)."""
    big, small = 3 * (128 << env.port_mtu) - 100, 100
    va, rkey = live.peer['va'], live.peer['rkey']
    rc = [(e.IBV_WR_SEND, big, None), (e.IBV_WR_SEND, small, None),
          (e.IBV_WR_SEND_WITH_IMM, big, 1),
          (e.IBV_WR_SEND_WITH_IMM, small, 2),
          (e.IBV_WR_RDMA_WRITE, big, None), (e.IBV_WR_RDMA_WRITE, small, None),
          (e.IBV_WR_RDMA_WRITE_WITH_IMM, big, 3),
          (e.IBV_WR_RDMA_WRITE_WITH_IMM, small, 4),
          (e.IBV_WR_RDMA_READ, big, None), (e.IBV_WR_RDMA_READ, small, None)]
    bad = []

    def done(what, cq):
        sts = [wc.status for wc in poll(cq, 1, 30.0)]
        if sts != [e.IBV_WC_SUCCESS]:
            bad.append('%s: %s' % (what, [ST.get(x, x) for x in sts]))

    for i, (op, n, imm) in enumerate(rc):
        buf = live.dst if op == e.IBV_WR_RDMA_READ else live.src
        post_send(live.side, 0x5000 + i, op, [buf.sge(PAGE, n)], imm=imm,
                  rkey=rkey, raddr=va + 2 * PAGE)
        done('RC opcode %d, %d bytes' % (op, n), live.side.scq)
    for i, op in enumerate((e.IBV_WR_ATOMIC_FETCH_AND_ADD,
                            e.IBV_WR_ATOMIC_CMP_AND_SWP)):
        wr = SendWR(wr_id=0x5100 + i, opcode=op, num_sge=1,
                    sg=[live.dst.sge(PAGE, 8)],
                    send_flags=e.IBV_SEND_SIGNALED)
        wr.set_wr_atomic(rkey, va + 3 * PAGE, 1, 2)
        live.side.qp.post_send(wr)
        done('atomic %d' % op, live.side.scq)
    fq.reap()	# the ERR QP's flushed receives share the CQ
    uc = next(qp for _, qp, t, _ in fq.qps if t == 'uc')
    for i, (op, n, imm) in enumerate(((e.IBV_WR_SEND, big, None),
                                      (e.IBV_WR_SEND_WITH_IMM, small, 5),
                                      (e.IBV_WR_RDMA_WRITE, big, None),
                                      (e.IBV_WR_RDMA_WRITE_WITH_IMM, small,
                                       6))):
        uc.post_send(mk_send(0x5200 + i, op, [live.src.sge(PAGE, n)],
                             imm=imm, rkey=0x1234, raddr=0x10000))
        done('UC opcode %d' % op, fq.cq)
    ud = next(qp for _, qp, t, _ in fq.qps if t == 'ud')
    ah = AH(env.pd, attr=ah_attr(env, fq.dgid))
    for i, imm in enumerate((None, 7)):
        wr = mk_send(0x5300 + i, e.IBV_WR_SEND_WITH_IMM if imm else
                     e.IBV_WR_SEND, [live.src.sge(PAGE, small)], imm=imm)
        wr.set_wr_ud(ah, PEER_QPN + 0x81, QKEY)
        ud.post_send(wr)
        done('UD SEND, immediate %s' % imm, fq.cq)
    ah.close()
    return not bad, '; '.join(bad)


def quiet(cnt, secs=2.0, limit=60.0):
    """Wait until rx_packets has not moved for secs; return the counters."""
    end = time.monotonic() + limit
    last = cnt.read()
    since = time.monotonic()
    while time.monotonic() < end:
        time.sleep(0.25)
        now = cnt.read()
        if now.get('rx_packets') != last.get('rx_packets'):
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= secs:
            return now
    return last


def accounting(before, after, rx, fuzz_rx, res):
    d = {k: after.get(k, 0) - before.get(k, 0) for k in after}
    comment('counter deltas: ' + ' '.join('%s=%d' % (k, v) for k, v in
                                         sorted(d.items()) if v))
    comment('frames to this address that eth0 took in: %d, fuzzed %d, '
            'live traffic %d; the fuzzer sent %d' % (
                rx, fuzz_rx, rx - fuzz_rx, res['sent']))
    check(d['rx_packets'] == rx, 'rx_packets grew by exactly the frames '
          'that arrived (%d)' % rx, 'rx_packets grew by %d' % d['rx_packets'])
    early = sum(d.get(k, 0) for k in ('rx_drop_malformed', 'rx_icrc_errors',
                                      'rx_drop_pkey', 'rx_drop_no_qp'))
    check(early <= d['rx_packets'], 'the early drops (malformed, ICRC, '
          'P_Key, no QP: %d) fit in rx_packets' % early)
    lost = res['sent'] - fuzz_rx
    if lost:
        comment('%d fuzzed frames never reached eth0 (lost between the '
                'guests): the per-class counts are bounds only' % lost)
    # With the fuzzer's window (fuzz.sh's 64 frames in flight) none is
    # lost in practice; more than a few, and the bounds above say little.
    check(lost <= res['sent'] // 100, 'fuzzed frames lost between the '
          'guests (%d) at most 1%% of the %d sent' % (lost, res['sent']))
    for k, c in (('rx_icrc_errors', 'icrc'), ('rx_drop_pkey', 'pkey'),
                 ('rx_drop_no_qp', 'no_qp')):
        if lost:
            check(res[c] - lost <= d.get(k, 0) <= res[c], '%s (%d) within '
                  'the %d lost frames below the fuzzer\'s prediction %d' % (
                      k, d.get(k, 0), lost, res[c]))
        else:
            check(d.get(k, 0) == res[c], '%s grew by the fuzzer\'s '
                  'prediction %d' % (k, res[c]), 'it grew by %d' %
                  d.get(k, 0))
    if not lost:
        check(d.get('rx_drop_malformed', 0) >= res['malformed'],
              'rx_drop_malformed grew by at least the fuzzer\'s prediction '
              '%d (the rest: packets a QP refused as malformed)' %
              res['malformed'], 'it grew by %d' %
              d.get('rx_drop_malformed', 0))
        # What went on to a QP: the prediction, less what a QP's handler
        # counted as malformed (a UC opcode for an RC QP, a response to a
        # responder, ...). Those and the packets from an address not the
        # QP's peer can only come out of the packets that reached a QP.
        extra = d.get('rx_drop_malformed', 0) - res['malformed']
        to_qp = d['rx_packets'] - early - (rx - fuzz_rx)
        comment('fuzzed packets that reached a QP handler: %d = predicted '
                '%d - %d a QP refused as malformed' % (
                    to_qp, res['to_qp'], extra))
        check(extra + d.get('rx_drop_not_peer', 0) <= res['to_qp'],
              'the drops at a QP (malformed there %d, not from the peer %d) '
              'fit in the %d packets that reached one' % (
                  extra, d.get('rx_drop_not_peer', 0), res['to_qp']))


def target_main(a):
    env = Env(a.dev, a.ip)
    check(env.gid_index is not None, 'IPv4 RoCE v2 GID found in sysfs')
    if env.gid_index is None:
        return 1
    cnt = Counters(a.dev)
    fq = FuzzQPs(env, a.peer)
    peer = wait_json(os.path.join(a.sync, 'fuzz-peer.json'),
                     'the peer published its QP')
    if peer is None:
        return 1
    live = Live(env, peer, a.peer)
    live.connect(env)
    publish(os.path.join(a.sync, 'fuzz-live.json'),
            dict(qpn=live.side.qpn, ip=a.ip))
    wait_file(os.path.join(a.sync, 'fuzz-peer.up'), 120)
    ok = all(live.round() for _ in range(4))
    check(ok, 'live connection: 4 WRITE+READ rounds verified before the '
          'fuzzing', '; '.join(live.errors))
    ok, why = send_seeds(env, live, fq)
    check(ok, 'seed traffic for the fuzzer: every opcode sent, every '
          'completion a success', why)

    # A quiet point: nothing in flight; start counting frames, then read
    # the counters.
    quiet(cnt, secs=1.0)
    cmd = [a.counter, '--count-rx', 'eth0', '--dst', a.ip]
    if a.ip6:
        cmd += ['--dst6', a.ip6]
    counter = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    check(counter.stdout.readline().startswith('sroce-fuzz: counting'),
          'the frame counter runs')
    before = cnt.read()
    th = threading.Thread(target=live.run)
    th.start()
    rth = threading.Thread(target=fq.recycler, args=(live.stop,))
    rth.start()
    publish(os.path.join(a.sync, 'fuzz-target.txt'),
            fq.txt(live.side.qpn, a.sync))
    comment('target ready: %d fuzz QPs, live QP %#x' % (len(fq.qps),
                                                        live.side.qpn))
    rf = os.path.join(a.sync, 'fuzz.result')
    got = wait_file(rf, a.timeout)
    check(got, 'the fuzzer finished')
    live.stop.set()
    th.join()
    rth.join()
    check(not fq.errors, 'fuzz QPs brought back from ERR throughout the '
          'fuzzing', '; '.join(fq.errors))
    check(not live.errors, 'live connection: %d rounds verified during the '
          'fuzzing' % live.rounds, '; '.join(live.errors))
    res = {}
    if got:
        with open(rf) as f:
            line = f.read().strip()
        comment(line)
        res = {k: float(v) if '.' in v else int(v) for k, v in
               (x.split('=') for x in line.split()[1:])}
    after = quiet(cnt)
    counter.send_signal(signal.SIGTERM)
    out = counter.communicate(timeout=30)[0]
    m = dict(x.split('=') for x in out.split()[1:] if '=' in x)
    if res and 'rx' in m:
        accounting(before, after, int(m['rx']), int(m['fuzz']), res)
    else:
        check(False, 'counter results', out)

    ok = all(live.round() for _ in range(8))
    check(ok, 'live connection: 8 WRITE+READ rounds verified after the '
          'fuzzing', '; '.join(live.errors))
    st = live.side.state()
    check(st == e.IBV_QPS_RTS, 'live connection: QP still in RTS',
          QPS.get(st, st))
    ok, detail = fq.guards_ok()
    check(ok, 'guard bytes around %d MRs and the receive buffers intact' %
          len(fq.mrs), detail)
    # Not the fuzzer's prediction: the MR's own rights.
    check(fq.ro.untouched(), 'the MR without remote write or atomic rights: '
          'every byte as it was', fq.ro.diff())
    for r in (live.src, live.dst):
        cur = r.map[:]
        lo, hi = r.off, r.off + r.mr.length
        check(cur[:lo] == r.data[:lo] and cur[hi:] == r.data[hi:],
              'live buffers: guard bytes intact')
    states = []
    for name, qp, _, _ in fq.qps:
        st = qp.query(e.IBV_QP_STATE)[0].qp_state
        states.append('%s: %s' % (name, QPS.get(st, st)))
    comment('fuzz QPs after the run: ' + ', '.join(states))
    fq.reap()
    comment('%d completions on the fuzz QPs, %d live rounds in all, '
            'fuzz QPs taken from ERR back to RTR/RTS %d times (%d times '
            'back in ERR half way)' % (fq.completions, live.rounds,
                                      fq.recycled, fq.refused))
    publish(os.path.join(a.sync, 'fuzz-target.finished'), '')
    return status()


def main():
    ap, (t, p) = role_parsers('target', 'peer')
    dev_args(t)
    t.add_argument('--ip6', help='count the IPv6 frames to this address too')
    t.add_argument('--peer', required=True)
    t.add_argument('--sync', required=True)
    t.add_argument('--counter', required=True)
    t.add_argument('--timeout', type=int, default=3000)
    dev_args(p)
    p.add_argument('--sync', required=True)
    a = ap.parse_args()
    return target_main(a) if a.role == 'target' else peer_main(a)


if __name__ == '__main__':
    sys.stdout.reconfigure(line_buffering=True)
    sys.exit(main())
