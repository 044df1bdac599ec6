#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""On-demand paging: RC traffic into and out of ODP MRs whose pages the
process has just dropped, between QPs of one device.

rdma-core's own ODP tests register fresh buffers and never drop their
pages. Here every MR is over a shared anonymous mapping whose pages are
dropped from the page tables (madvise MADV_DONTNEED: the memory keeps its
bytes, ib_core is told to invalidate the range) before each operation, so
each side misses and faults in:
- a WRITE into a dropped target (the responder's RNR NAK and retry), the
  bytes around the written range untouched;
- a WRITE from a dropped and rewritten source (the requester pauses);
- a READ into a dropped local buffer from a dropped remote one;
- FETCH_ADD and CMP_SWAP on dropped words;
- a SEND into a dropped receive buffer;
- WRITEs while another thread keeps dropping the target's pages, then one
  whose bytes must all be there;
- a WRITE into an ODP MR whose mapping is gone completes with
  REM_ACCESS_ERR, and nothing is written anywhere.

usage: odp.py DEV --ip A.B.C.D
"""
import ctypes
import threading
import time

from pyverbs.mr import MR
from pyverbs.pyverbs_error import PyverbsRDMAError
from sroce_lib import (Counters, LW, PAGE, Pair, RR, RW, Region, case, check,
                       e, expect, mk_send, pattern, poll, post_recv,
                       post_send, run, start, wc_str)


ODP = 1 << 6			# IBV_ACCESS_ON_DEMAND
RA = e.IBV_ACCESS_REMOTE_ATOMIC
MADV_DONTNEED = 4
ODP_SUPPORT = 1			# IBV_ODP_SUPPORT
RC_NEED = 0x3f			# SEND RECV WRITE READ ATOMIC SRQ_RECV

libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                      ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]


def drop(region):
    """Unmap every page of the region's mapping (python's anonymous mmap
    is shared: the bytes stay, the next touch maps them again)."""
    if libc.madvise(region.base, len(region.map), MADV_DONTNEED):
        raise OSError(ctypes.get_errno(), 'madvise')


def odp_region(env, pages, access, seed):
    return Region(env, pages * PAGE, access | ODP, seed=seed)


@case
def odp_write(env):
    t = 'ODP WRITE'
    p = Pair(env)
    tgt = odp_region(env, 4, LW | RW, 61)
    src = odp_region(env, 4, LW, 62)
    drop(tgt)
    before = Counters(env.dev).read()
    # 2.5 pages from an offset: three pages missing on the responder.
    n, at = 2 * PAGE + PAGE // 2, PAGE // 4
    post_send(p.a, 1, e.IBV_WR_RDMA_WRITE, [src.sge(0, n)],
              rkey=tgt.mr.rkey, raddr=tgt.addr(at))
    expect(t + ' into dropped pages completes', p.a.scq,
           [(1, e.IBV_WC_SUCCESS)])
    d = Counters(env.dev).delta(before)
    check(d.get('tx_rnr_naks', 0) >= 1 and d.get('rx_rnr_naks', 0) >= 1,
          t + ': the responder missed, sent an RNR NAK and was retried',
          str(d))
    want = bytearray(tgt.data)
    want[at:at + n] = src.data[:n]
    check(tgt.map[:] == bytes(want),
          t + ': the bytes in place, nothing around them changed')

    # The requester's pages dropped and written again by the CPU: ib_core
    # invalidated them, so the requester's copy misses and waits.
    drop(src)
    fresh = pattern(len(src.map), 63)
    src.map[:] = fresh
    drop(tgt)
    post_send(p.a, 2, e.IBV_WR_RDMA_WRITE, [src.sge(PAGE, 2 * PAGE)],
              rkey=tgt.mr.rkey, raddr=tgt.addr(0))
    expect(t + ' from dropped, rewritten pages completes', p.a.scq,
           [(2, e.IBV_WC_SUCCESS)])
    check(tgt.map[:2 * PAGE] == fresh[PAGE:3 * PAGE] and
          tgt.map[2 * PAGE:] == want[2 * PAGE:],
          t + ': the rewritten bytes arrive')
    p.close()
    for r in (tgt, src):
        r.mr.close()


@case
def odp_read(env):
    t = 'ODP READ'
    p = Pair(env)
    remote = odp_region(env, 3, LW | RR, 64)
    local = odp_region(env, 3, LW, 65)
    want = pattern(3 * PAGE, 66)
    remote.map[:] = want
    drop(local)
    post_send(p.a, 3, e.IBV_WR_RDMA_READ, [local.sge(0, 3 * PAGE)],
              rkey=remote.mr.rkey, raddr=remote.addr(0))
    expect(t + ' into a dropped local buffer completes', p.a.scq,
           [(3, e.IBV_WC_SUCCESS)])
    check(local.map[:] == want, t + ': the bytes arrive', local.diff())
    local.map[:] = bytes(3 * PAGE)
    drop(remote)
    drop(local)
    post_send(p.a, 4, e.IBV_WR_RDMA_READ, [local.sge(PAGE, PAGE)],
              rkey=remote.mr.rkey, raddr=remote.addr(PAGE))
    expect(t + ' of a dropped remote page completes', p.a.scq,
           [(4, e.IBV_WC_SUCCESS)])
    check(local.map[:] == bytes(PAGE) + want[PAGE:2 * PAGE] + bytes(PAGE),
          t + ': the page arrives, nothing around it changed')
    p.close()
    for r in (remote, local):
        r.mr.close()


@case
def odp_atomic(env):
    t = 'ODP atomic'
    p = Pair(env, a_conn={'access': LW | RW | RR | RA},
             b_conn={'access': LW | RW | RR | RA})
    remote = odp_region(env, 1, LW | RA, 67)
    local = odp_region(env, 1, LW, 68)
    drop(remote)
    drop(local)
    wr = mk_send(5, e.IBV_WR_ATOMIC_FETCH_AND_ADD, [local.sge(0, 8)])
    wr.set_wr_atomic(remote.mr.rkey, remote.addr(64), 7, 0)
    p.a.qp.post_send(wr)
    expect(t + ' FETCH_ADD on dropped words completes', p.a.scq,
           [(5, e.IBV_WC_SUCCESS)])
    orig = int.from_bytes(remote.data[64:72], 'little')
    added = (orig + 7) % (1 << 64)
    check(int.from_bytes(local.map[0:8], 'little') == orig and
          int.from_bytes(remote.map[64:72], 'little') == added,
          t + ': FETCH_ADD returned the word and added')
    drop(remote)
    drop(local)
    wr = mk_send(6, e.IBV_WR_ATOMIC_CMP_AND_SWP, [local.sge(8, 8)])
    wr.set_wr_atomic(remote.mr.rkey, remote.addr(64), added,
                     0x1122334455667788)
    p.a.qp.post_send(wr)
    expect(t + ' CMP_SWAP on dropped words completes', p.a.scq,
           [(6, e.IBV_WC_SUCCESS)])
    check(int.from_bytes(remote.map[64:72], 'little') == 0x1122334455667788
          and int.from_bytes(local.map[8:16], 'little') == added,
          t + ': CMP_SWAP swapped')
    p.close()
    for r in (remote, local):
        r.mr.close()


@case
def odp_send(env):
    t = 'ODP SEND'
    p = Pair(env)
    rbuf = odp_region(env, 3, LW, 69)
    sbuf = odp_region(env, 3, LW, 70)
    drop(rbuf)
    n = 2 * PAGE + 100
    post_recv(p.b, 7, [rbuf.sge(50, n)])
    post_send(p.a, 8, e.IBV_WR_SEND, [sbuf.sge(0, n)])
    expect(t + ': send completes', p.a.scq, [(8, e.IBV_WC_SUCCESS)])
    expect(t + ': receive into dropped pages completes', p.b.rcq,
           [(7, e.IBV_WC_SUCCESS)])
    want = bytearray(rbuf.data)
    want[50:50 + n] = sbuf.data[:n]
    check(rbuf.map[:] == bytes(want), t + ': the bytes in place',
          rbuf.diff())
    p.close()
    for r in (rbuf, sbuf):
        r.mr.close()


@case
def odp_write_while_dropping(env):
    t = 'ODP WRITE while the target drops its pages'
    p = Pair(env)
    tgt = odp_region(env, 8, LW | RW, 71)
    src = odp_region(env, 8, LW, 72)
    stop = threading.Event()
    drops = [0]

    def dropper():
        while not stop.is_set():
            libc.madvise(tgt.base, len(tgt.map), MADV_DONTNEED)
            drops[0] += 1
            time.sleep(0.001)

    th = threading.Thread(target=dropper)
    th.start()
    n, batch, bad = 96, 16, []
    try:
        for i in range(0, n, batch):
            for j in range(i, i + batch):
                off = (j % 4) * PAGE
                post_send(p.a, 100 + j, e.IBV_WR_RDMA_WRITE,
                          [src.sge(off, 4 * PAGE)], rkey=tgt.mr.rkey,
                          raddr=tgt.addr(off))
            got = poll(p.a.scq, batch, 60)
            bad += [wc_str(w) for w in got if w.status != e.IBV_WC_SUCCESS]
            bad += ['%d missing' % (batch - len(got))] if len(got) < batch \
                else []
    finally:
        stop.set()
        th.join()
    check(not bad and p.a.state() == e.IBV_QPS_RTS,
          t + ': every WRITE completed, QP still RTS',
          '%d WRITEs, %d drops; %s' % (n, drops[0], '; '.join(bad[:4])))
    post_send(p.a, 1000, e.IBV_WR_RDMA_WRITE, [src.sge(0, 8 * PAGE)],
              rkey=tgt.mr.rkey, raddr=tgt.addr(0))
    expect(t + ': a last WRITE completes', p.a.scq,
           [(1000, e.IBV_WC_SUCCESS)])
    check(tgt.map[:] == src.data, t + ': every byte of the last WRITE in '
          'place', tgt.diff())
    p.close()
    for r in (tgt, src):
        r.mr.close()


@case
def odp_unmapped(env):
    t = 'ODP WRITE into an unmapped MR'
    p = Pair(env)
    size = 2 * PAGE
    addr = libc.mmap(None, size, 3, 0x22, -1, 0)	# RW, PRIVATE|ANONYMOUS
    check(addr not in (None, ctypes.c_void_p(-1).value), t + ': mmap')
    mr = MR(env.pd, size, LW | RW | ODP, address=addr)
    src = odp_region(env, 1, LW, 73)
    other = Region(env, PAGE, LW | RW, seed=74)
    check(libc.munmap(addr, size) == 0, t + ': munmap')
    post_send(p.a, 9, e.IBV_WR_RDMA_WRITE, [src.sge(0, 64)], rkey=mr.rkey,
              raddr=addr + 16)
    expect(t + ': REM_ACCESS_ERR', p.a.scq, [(9, e.IBV_WC_REM_ACCESS_ERR)])
    check(other.untouched() and src.untouched(),
          t + ': nothing written anywhere')
    p.close()
    for m in (mr, src.mr, other.mr):
        m.close()


def main():
    _, env, t0 = start()
    if not env:
        return 1
    caps = env.ctx.query_device_ex().odp_caps
    ok = caps.general_caps & ODP_SUPPORT and \
        caps.rc_odp_caps & RC_NEED == RC_NEED
    check(ok, 'device offers ODP for RC send, receive, write, read, '
          'atomics and SRQ', 'general %#x rc %#x' % (caps.general_caps,
                                                   caps.rc_odp_caps))
    if not ok:
        try:
            MR(env.pd, PAGE, LW | ODP).close()
            check(False, 'without ODP offered, an ODP MR is refused')
        except PyverbsRDMAError as x:
            check(True, 'without ODP offered, an ODP MR is refused', x)
        return env.finish('odp.py', t0)
    for fn in (odp_write, odp_read, odp_atomic, odp_send,
               odp_write_while_dropping, odp_unmapped):
        fn(env)
    return env.finish('odp.py', t0)


if __name__ == '__main__':
    run(main, 'odp.py')
