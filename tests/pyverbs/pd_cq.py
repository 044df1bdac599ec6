#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""PD and CQ objects through the stock rxe provider.

Opens the device with pyverbs, checks the attributes the provider and the
kernel agree on, allocates PDs and CQs across the whole size range, checks
the limits are enforced, opens more user contexts than rdma_rxe allows
(sroce has no device-wide cap), and frees everything. Prints one TAP-style line per
check; exits non-zero if any failed.
"""
import errno
import os
import resource
import sys

from pyverbs.cq import CQ, CompChannel
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPCap, QPInitAttr

from sroce_lib import check, e, expect_errno, qp_res, status, up_to_limit

CONTEXTS = 600


def qp_cpus(ctx, dev):
    """A PD's QPs take the CPUs in turn (their workers send long messages),
    also when another PD creates a QP between each two of them, as
    perftest's client and server do in one guest."""
    cq = CQ(ctx, 16)
    pds = (PD(ctx), PD(ctx))
    qps = ([], [])
    cap = QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1, max_recv_sge=1)
    for _ in range(4):
        for i, pd in enumerate(pds):
            qps[i].append(QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq,
                                            rcq=cq, cap=cap)))
    cpus = [[qp_res(dev, qp.qp_num).get('cpu') for qp in q] for q in qps]
    n = len(os.sched_getaffinity(0))    # the online CPUs
    want = [[(c[0] + k) % n if c[0] is not None else 0
             for k in range(4)] for c in cpus]
    check(cpus == want and len({c[0] for c in cpus}) == min(n, 2),
          'QPs of two PDs created in turn: each PD\'s 4 QPs on CPUs in '
          'turn, the PDs\' first ones apart (%d CPUs)' % n, cpus)
    for q in qps:
        for qp in q:
            qp.close()
    for pd in pds:
        pd.close()
    cq.close()


def main(dev, full_limits):
    ctx = Context(name=dev)
    attr = ctx.query_device()
    check(attr.fw_version == '0.1.0', 'fw_ver is 0.1.0', attr.fw_version)
    check(attr.max_cqe == 1048575, 'max_cqe is 1048575', attr.max_cqe)
    check(attr.max_pd == 65536, 'max_pd is 65536', attr.max_pd)
    port = ctx.query_port(1)
    check(port.gid_tbl_len == 1024, 'gid table length', port.gid_tbl_len)

    # CQ sizes from 1 to the maximum: the provider maps each ring.
    sizes = sorted(set([1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 63, 64, 100, 255,
                        256, 1000, 4095, 4096, 32767, 32768, attr.max_cqe]))
    cqs = []
    bad = []
    for n in sizes:
        cq = CQ(ctx, n)
        if cq.cqe < n or cq.poll(1)[0] != 0:
            bad.append((n, cq.cqe))
        cqs.append(cq)
    check(not bad, 'CQs of %d sizes 1..%d created, empty, cqe >= asked'
          % (len(sizes), attr.max_cqe), bad)
    expect_errno(lambda: CQ(ctx, attr.max_cqe + 1), errno.EINVAL,
                 'CQ above max_cqe refused with EINVAL')
    expect_errno(lambda: CQ(ctx, 0), errno.EINVAL,
                 'CQ of size 0 refused with EINVAL')

    # Resize: grow and shrink; the provider re-maps the ring each time.
    cq = cqs[0]
    ok = True
    for n in (100, 5, 65535, 1):
        cq.resize(n)
        ok = ok and cq.cqe >= n and cq.poll(1)[0] == 0
    check(ok, 'resize CQ 1 -> 100 -> 5 -> 65535 -> 1')
    try:
        cq.resize(attr.max_cqe + 1)
        check(False, 'resize above max_cqe refused')
    except PyverbsRDMAError as e:
        check(e.error_code == errno.EINVAL, 'resize above max_cqe refused',
              e.error_code)

    # Notification arming on a CQ with a completion channel.
    cc = CompChannel(ctx)
    ncq = CQ(ctx, 16, None, cc, 0)
    ncq.req_notify(solicited_only=False)
    ncq.req_notify(solicited_only=True)
    check(True, 'req_notify on a CQ with a completion channel')
    ncq.close()
    cc.close()
    for c in cqs:
        c.close()

    # PDs: many at once, then the device limit.
    # Objects ib_core holds on the device count against its limits.
    kpd = int(os.environ.get('SROCE_KERNEL_PD', '0'))
    kcq = int(os.environ.get('SROCE_KERNEL_CQ', '0'))
    count = attr.max_pd - kpd if full_limits else 4096
    pds = [PD(ctx) for _ in range(count)]
    check(len(pds) == count, '%d PDs allocated' % count)
    if full_limits:
        expect_errno(lambda: PD(ctx), errno.ENOMEM,
                     'PD above max_pd refused with ENOMEM')
    for p in pds:
        p.close()
    p = PD(ctx)
    check(True, 'PD allocatable again after freeing')
    p.close()

    qp_cpus(ctx, dev)
    if full_limits:
        up_to_limit(lambda: CQ(ctx, 1), attr.max_cq, kcq, 'CQ', 'max_cq')
    ctx.close()

    # No device-wide cap on user contexts (rdma_rxe's 512 let one user
    # lock the others out): 600 from one process, whose open files (two
    # per context) are what bounds them.
    lim = resource.getrlimit(resource.RLIMIT_NOFILE)
    if lim[0] < 4 * CONTEXTS:
        resource.setrlimit(resource.RLIMIT_NOFILE,
                           (4 * CONTEXTS, max(lim[1], 4 * CONTEXTS)))
    ctxs = []
    try:
        for _ in range(CONTEXTS):
            ctxs.append(Context(name=dev))
        PD(ctxs[-1]).close()
    except PyverbsRDMAError as e:
        check(False, '%d user contexts open at once' % CONTEXTS,
              'failed at %d: errno %d' % (len(ctxs), e.error_code))
    else:
        check(True, '%d user contexts open at once, a PD in the last' %
              CONTEXTS)
    for c in ctxs:
        c.close()
    return status()


if __name__ == '__main__':
    sys.exit(main(sys.argv[1], '--full' in sys.argv))
