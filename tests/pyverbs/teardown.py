#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Verbs objects torn down while traffic to or from them is in flight,
between RC QPs of one device talking to each other, through the stock rxe
provider.

usage: teardown.py DEV --ip A.B.C.D [--rounds N]

Each round posts a burst of RDMA WRITEs or READs (or SENDs) from a to b
and, with the burst held behind an RNR'ed SEND, at once, after the first
completion or after a quarter of them, tears down what they use:
  dereg    b deregisters the MR they target        -> REM_ACCESS_ERR
  dealloc  b deallocates the type 1 window they use -> REM_ACCESS_ERR
  inv      b invalidates (LOCAL_INV) their type 2 window -> REM_ACCESS_ERR
  destroy  b destroys its QP                        -> RETRY_EXC_ERR
  local    a deregisters its own source MR, then destroys its QP
Checked every round: a's completions all arrive, in order, as successes,
then at most the one error named above, then flushes (local: any status,
but every completion, and the QP destroyed without a hang); once the
teardown call has returned (for LOCAL_INV: once it completed), the target
memory is refilled and must not change again, and the bytes around the
MR or window never change at all. The kernel's own checks (KASAN,
lockdep, kmemleak in the debug kernel) watch the same races. Each kind
must have met messages still in flight in at least one round.
"""
import os
import sys
import time

from pyverbs.mr import MR, MW

from mw import bind1, bind2, closeall

import sroce_lib
from sroce_lib import (LW, PAGE, Pair, RR, RW, Region, ST, check, comment, e,
                       mk_send, poll, post_recv, sge, start, wc_str)

BIND = e.IBV_ACCESS_MW_BIND
OK = e.IBV_WC_SUCCESS
FLUSH = e.IBV_WC_WR_FLUSH_ERR
BURST = 32		# messages posted per round
MSG = 16 * PAGE		# bytes per message
GUARD = PAGE		# bytes on each side of the target, never granted
WIN = 2 * MSG		# the granted span: messages land in it in turn


def shape(wcs, n, err):
    """'' when wcs are n completions in wr_id order: successes, at most one
    err (any status when err is None), then flushes; else what is wrong."""
    if len(wcs) != n:
        return '%d of %d completions' % (len(wcs), n)
    seen = None
    for i, w in enumerate(wcs):
        if w.wr_id != i:
            return 'completion %d has wr_id %d' % (i, w.wr_id)
        if seen is None:
            if w.status == OK:
                continue
            if err is not None and w.status not in (err, FLUSH):
                return 'completion %d: %s' % (i, wc_str(w))
            seen = w.status
        elif w.status != FLUSH:
            return 'completion %d after an error: %s' % (i, wc_str(w))
    return ''


class Round:
    """One pair, a target region on b (guarded on both sides) and a source
    on a. access: the target MR's; the caller may put a window over it.
    Round n's mode (n % 4): 0 holds the burst behind a SEND that b has no
    receive for (RNR NAKs every 20 ms), so that the teardown certainly
    meets every message still queued, and release() lets it go on; 1 tears
    down at once, 2 after the first completion, 3 after a quarter of them,
    to meet it at different stages (or not at all: the copy is fast)."""

    def __init__(self, env, access, n, conn=None):
        self.mode = n % 4
        b_conn = {'access': LW | RW | RR}
        if self.mode == 0:
            b_conn['min_rnr_timer'] = 24
        self.p = Pair(env, a_kw={'max_wr': BURST}, b_kw={'max_wr': BURST},
                      b_conn=b_conn, a_conn=conn or {})
        # Random bytes: rc_errors' pattern() costs seconds per round
        # under emulation.
        self.tgt = Region(env, GUARD + WIN + GUARD, access, off=GUARD,
                          length=WIN, data=os.urandom(GUARD + WIN + GUARD))
        self.src = MR(env.pd, BURST * MSG, LW)
        self.src.write(os.urandom(BURST * MSG), BURST * MSG)
        self.rbuf = MR(env.pd, PAGE, LW)
        self.held = []

    def burst(self, opcode, rkey, base):
        """BURST messages a -> b (b's receives posted for SENDs) in one
        post, so that one doorbell starts them: the transmit loop sends a
        budget's worth in the poster's context and leaves the rest to a
        worker, which the teardown can then meet."""
        wrs = []
        for i in range(BURST):
            off = (i * MSG) % WIN
            if self.mode == 0 and i == 0:
                wrs.append(mk_send(i, e.IBV_WR_SEND, [sge(self.src, 0, 64)]))
                self.held.append((i, [sge(self.rbuf, 0, 64)]))
            elif opcode == e.IBV_WR_SEND:
                rsge = [self.tgt.sge(GUARD + off, MSG)]
                if self.mode == 0:
                    self.held.append((i, rsge))
                else:
                    post_recv(self.p.b, i, rsge)
                wrs.append(mk_send(i, opcode, [sge(self.src, i * MSG, MSG)]))
            else:
                wrs.append(mk_send(i, opcode, [sge(self.src, i * MSG, MSG)],
                                   rkey=rkey, raddr=base + off))
        for wr, nxt in zip(wrs, wrs[1:]):
            wr.next_wr = nxt
        self.p.a.qp.post_send(wrs[0])

    def first(self):
        """Let the burst get under way as the mode says; a's completions
        so far."""
        if self.mode == 0:
            time.sleep(0.005)	# the SEND has had its RNR NAK
            return []
        return poll(self.p.a.scq, (0, 1, BURST // 4)[self.mode - 1])

    def release(self):
        """Mode 0: b gets the receives it lacked, so the burst goes on (to
        what the teardown left)."""
        for wr_id, rsge in self.held:
            post_recv(self.p.b, wr_id, rsge)
        self.held = []

    def refill(self):
        """Overwrite the granted span; returns what it must keep."""
        self.tgt.map[GUARD:GUARD + WIN] = bytes([0x5a]) * WIN
        self.tgt.data = (self.tgt.data[:GUARD] + bytes([0x5a]) * WIN +
                         self.tgt.data[GUARD + WIN:])

    def close(self, *objs):
        closeall(*objs, self.src, self.rbuf)
        self.p.close()
        closeall(self.tgt.mr)

    def window(self, env, t, mw_type):
        """A window of mw_type over the span, bound by b; returns it and
        its rkey."""
        mw = MW(env.pd, mw_type)
        if mw_type == e.IBV_MW_TYPE_1:
            bind1(self.p.b, mw, self.tgt.mr, self.tgt.addr(GUARD), WIN,
                  RW | RR, 0xb0)
            rkey = mw.rkey
        else:
            rkey = bind2(self.p.b, mw, self.tgt.mr, self.tgt.addr(GUARD),
                         WIN, RW | RR, 0xb0)
        if not poll(self.p.b.scq, 1):
            check(False, t + ': bind completes')
        return mw, rkey

    def end(self, t, wcs, err, release=True, objs=()):
        """After the teardown: overwrite the span, let a held burst go on
        (unless b is gone), check a's completions and the memory (finish),
        close; the messages that completed."""
        self.refill()
        if release:
            self.release()
        done = finish(t, self, wcs, err)
        self.close(*objs)
        return done


def finish(t, r, wcs, err, secs=10.0):
    """The rest of a's completions, their shape, then the memory."""
    wcs = wcs + poll(r.p.a.scq, BURST - len(wcs), secs)
    bad = shape(wcs, BURST, err)
    check(not bad, t + ': every completion, successes then ' +
          (ST[err] if err is not None else 'any error') + ' then flushes',
          bad)
    time.sleep(0.02)	# anything late would land now
    check(r.tgt.untouched(), t + ': nothing written after the teardown, '
          'nothing around the target', r.tgt.diff())
    return sum(1 for w in wcs if w.status == OK)


def round_dereg(env, n):
    op = (e.IBV_WR_RDMA_WRITE, e.IBV_WR_RDMA_READ)[n % 2]
    t = 'dereg %d (%s)' % (n, 'WRITE' if n % 2 == 0 else 'READ')
    r = Round(env, LW | RW | RR, n)
    r.burst(op, r.tgt.mr.rkey, r.tgt.addr(GUARD))
    wcs = r.first()
    r.tgt.mr.close()
    return r.end(t, wcs, e.IBV_WC_REM_ACCESS_ERR)


def round_dealloc(env, n):
    t = 'dealloc %d' % n
    r = Round(env, LW | BIND, n)
    mw, rkey = r.window(env, t, e.IBV_MW_TYPE_1)
    r.burst(e.IBV_WR_RDMA_WRITE, rkey, r.tgt.addr(GUARD))
    wcs = r.first()
    mw.close()
    return r.end(t, wcs, e.IBV_WC_REM_ACCESS_ERR)


def round_inv(env, n):
    t = 'inv %d' % n
    r = Round(env, LW | BIND, n)
    mw, rkey = r.window(env, t, e.IBV_MW_TYPE_2)
    r.burst(e.IBV_WR_RDMA_WRITE, rkey, r.tgt.addr(GUARD))
    wcs = r.first()
    wr = mk_send(0xb1, e.IBV_WR_LOCAL_INV, [])
    wr.imm_data = rkey
    r.p.b.qp.post_send(wr)
    inv = poll(r.p.b.scq, 1)
    check(len(inv) == 1 and inv[0].status == OK,
          t + ': LOCAL_INV completes', '; '.join(wc_str(w) for w in inv))
    return r.end(t, wcs, e.IBV_WC_REM_ACCESS_ERR, objs=(mw,))


def round_destroy(env, n):
    op = (e.IBV_WR_RDMA_WRITE, e.IBV_WR_SEND)[n % 2]
    t = 'destroy %d (%s)' % (n, 'WRITE' if n % 2 == 0 else 'SEND')
    # 16.8 ms and 3 retries: the retry budget runs out in a fraction of a
    # second once b is gone, and no sooner while it answers.
    r = Round(env, LW | RW | RR, n, conn={'timeout': 12, 'retry_cnt': 3})
    r.burst(op, r.tgt.mr.rkey, r.tgt.addr(GUARD))
    wcs = r.first()
    r.p.b.qp.close()
    return r.end(t, wcs, e.IBV_WC_RETRY_EXC_ERR, release=False)


def round_local(env, n):
    t = 'local %d' % n
    r = Round(env, LW | RW | RR, n)
    r.burst(e.IBV_WR_RDMA_WRITE, r.tgt.mr.rkey, r.tgt.addr(GUARD))
    wcs = r.first()
    r.src.close()
    r.release()
    wcs += poll(r.p.a.scq, BURST - len(wcs))
    bad = shape(wcs, BURST, None)
    check(not bad, t + ': every completion after the source MR went', bad)
    t0 = time.monotonic()
    r.p.a.qp.close()
    check(time.monotonic() - t0 < 5, t + ': destroy_qp returns')
    r.close()
    return sum(1 for w in wcs if w.status == OK)


def main():
    args, env, t0 = start(('--rounds', {'type': int, 'default': 8}))
    if not env:
        return 1
    kinds = (round_dereg, round_dealloc, round_inv, round_destroy,
             round_local)
    landed = 0
    met = {fn: 0 for fn in kinds}
    timed = timed_met = 0
    for n in range(args.rounds):
        for fn in kinds:
            before = sroce_lib.failed
            try:
                done = fn(env, n)
                landed += done
                met[fn] += done < BURST
                if n % 4:
                    timed += 1
                    timed_met += done < BURST
            except Exception as x:	# pylint: disable=broad-except
                check(False, '%s %d: ran to the end' % (fn.__name__, n),
                      '%s: %s' % (type(x).__name__, x))
            if sroce_lib.failed != before:
                comment('%s %d failed' % (fn.__name__, n))
    # A teardown that only ever came after the last completion tested
    # nothing: each kind must have met messages still on their way (the
    # held rounds make sure of it; the timed ones are reported).
    for fn in kinds:
        check(met[fn] > 0, '%s: the teardown met messages in flight' %
              fn.__name__[6:], 'in none of %d rounds' % args.rounds)
    comment('%d rounds of %d kinds; %d of %d messages completed '
            'successfully; rounds that met messages in flight: %s; '
            'of the timed rounds: %d of %d' %
            (args.rounds, len(kinds), landed,
             args.rounds * len(kinds) * BURST,
             ', '.join('%s %d' % (fn.__name__[6:], met[fn])
                       for fn in kinds), timed_met, timed))
    return env.finish('teardown.py', t0)


if __name__ == '__main__':
    sys.exit(main())
