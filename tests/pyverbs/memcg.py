#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""What a user makes the kernel hold is charged to its memory cgroup.

Rings of QPs, CQs and SRQs, the send queue's kernel shadow and MR page
arrays live in the kernel as long as the process wants them. This script
moves itself into a memory cgroup with a small limit, creates big QPs, CQs
and SRQs until refused, and checks that the refusal is ENOMEM within the
limit (not after the host lost far more memory than the limit), that no
OOM kill happened, that a process outside the cgroup still gets its
objects, and that freeing everything lets the cgroup create again. With
--ip (the device's IPv4 address), loopback RC pairs then move 16 KiB each
way: the page each QP's sending stream keeps for packet heads over a page
must be charged too. Prints one TAP-style line per check; exits non-zero
if any failed. Needs root and a kernel with the memory controller.
"""
import ctypes
import errno
import os
import subprocess
import sys

from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsError
from pyverbs.qp import QP, QPCap, QPInitAttr
from pyverbs.srq import SRQ, SrqInitAttr, SrqAttr
from sroce_lib import (Env, LW, Pair, check, e, filled_mr, poll, post_recv,
                       post_send, run, sge, status, wc_str)


ROOT = '/sys/fs/cgroup'
CG = ROOT + '/sroce-memcg'
MIB = 1 << 20
LIMIT = 48 * MIB	# what the objects may take above the process's own
# Without the charge, objects go on until the guest has lost this much.
RUNAWAY = 4 * LIMIT
WR, SGE = 4096, 32	# about 11 MiB of rings and shadow per QP
ODP_SUPPORT = 1		# IBV_ODP_SUPPORT


def comment(msg):
    print('# ' + msg, flush=True)


def cg_read(name):
    with open(CG + '/' + name) as f:
        return f.read()


def cg_write(path, val):
    with open(path, 'w') as f:
        f.write(str(val))


def mem_available():
    with open('/proc/meminfo') as f:
        for line in f:
            if line.startswith('MemAvailable:'):
                return int(line.split()[1]) * 1024
    return 0


def oom_kills():
    for line in cg_read('memory.events').splitlines():
        k, v = line.split()
        if k == 'oom_kill':
            return int(v)
    return -1


def setup_cgroup():
    """Mount cgroup2 where missing, make CG with the memory controller."""
    if not os.path.exists(ROOT + '/cgroup.controllers'):
        subprocess.run(['mount', '-t', 'cgroup2', 'none', ROOT], check=True)
    if 'memory' not in open(ROOT + '/cgroup.controllers').read().split():
        return False
    cg_write(ROOT + '/cgroup.subtree_control', '+memory')
    os.makedirs(CG, exist_ok=True)
    cg_write(CG + '/cgroup.procs', os.getpid())
    return True


def teardown_cgroup():
    cg_write(ROOT + '/cgroup.procs', os.getpid())
    os.rmdir(CG)


def big_qp(pd, cq, wr=WR, sge=SGE):
    cap = QPCap(max_send_wr=wr, max_recv_wr=wr, max_send_sge=sge,
                max_recv_sge=sge)
    return QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap))


def errno_of(x):
    return getattr(x, 'error_code', None)


def odp_mr(pd, size):
    """An on-demand-paging MR over size bytes of reserved address space:
    nothing is pinned, but the kernel keeps 8 bytes per page for it."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                          ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    # PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE
    addr = libc.mmap(None, size, 1, 0x4022, -1, 0)
    if addr in (None, ctypes.c_void_p(-1).value):
        raise OSError(ctypes.get_errno(), 'mmap of %d GiB' % (size >> 30))
    try:
        return MR(pd, size, 1 | (1 << 6), address=addr)	# LOCAL_WRITE|ODP
    finally:
        libc.munmap(addr, size)


def outsider(dev, max_wr, max_sge):
    """A process in the root cgroup creates a maximum-size QP and CQ."""
    code = ('import sys\n'
            'sys.path.insert(0, %r)\n'
            'from memcg import *\n'
            'ctx = Context(name=%r)\n'
            'pd = PD(ctx)\n'
            'cq = CQ(ctx, ctx.query_device().max_cqe)\n'
            'qp = big_qp(pd, cq, %d, %d)\n'
            'for o in (qp, cq, pd, ctx):\n'
            '    o.close()\n' % (os.path.dirname(os.path.abspath(__file__)),
                                 dev, max_wr, max_sge))
    return subprocess.run(
        ['sh', '-c', 'echo $$ > %s/cgroup.procs && exec python3 -c "$0"' %
         ROOT, code], capture_output=True, text=True, timeout=120)


HEAD_PAIRS = 48
HEAD_PAGE = 32 << 10	# a stream's page for heads over a page (order 3)
MSG = 16384


def heads(dev, ip):
    """HEAD_PAIRS loopback RC pairs, each QP sending MSG bytes to the other:
    every QP's sending stream then keeps a HEAD_PAGE page for its packet
    heads (a same-host chunk is one packet) until the QP goes, and the
    cgroup's memory.current must have grown by most of them."""
    cg_write(CG + '/memory.max', 'max')
    env = Env(dev, ip)
    pairs = [Pair(env, a_kw={'max_wr': 4}, b_kw={'max_wr': 4})
             for _ in range(HEAD_PAIRS)]
    mr, _ = filled_mr(env, 2 * MSG, LW, 9)
    sides = [s for p in pairs for s in (p.a, p.b)]
    for s in sides:
        post_recv(s, 1, [sge(mr, MSG, MSG)])
    before = int(cg_read('memory.current'))
    for s in sides:
        post_send(s, 2, e.IBV_WR_SEND, [sge(mr, 0, MSG)])
    bad = []
    for s in sides:
        for cq in (s.scq, s.rcq):
            wcs = poll(cq, 1, 20)
            if len(wcs) != 1 or wcs[0].status != e.IBV_WC_SUCCESS:
                bad.append('; '.join(wc_str(w) for w in wcs) or 'none')
    check(not bad, '%d loopback QPs each sent and received %d B' %
          (len(sides), MSG), '%d failed: %s' % (len(bad), bad[:3]))
    grew = int(cg_read('memory.current')) - before
    want = len(sides) * HEAD_PAGE
    check(grew >= want * 3 // 4, 'the streams\' head pages are charged to '
          'the cgroup (%d QPs, %d KiB each)' % (len(sides), HEAD_PAGE >> 10),
          'memory.current grew by %d KiB, want about %d KiB' %
          (grew >> 10, want >> 10))
    comment('head pages: memory.current grew by %d KiB for %d QPs' %
            (grew >> 10, len(sides)))
    for p in pairs:
        p.close()
    mr.close()
    env.pd.close()
    env.ctx.close()


def main(dev, ip=None):
    if not setup_cgroup():
        check(False, 'the kernel has the memory controller')
        return 1
    ctx = Context(name=dev)
    attr = ctx.query_device()
    pd = PD(ctx)
    cq = CQ(ctx, 16)
    base = int(cg_read('memory.current'))
    cg_write(CG + '/memory.max', base + LIMIT)
    if os.path.exists(CG + '/memory.swap.max'):
        cg_write(CG + '/memory.swap.max', 0)
    avail0 = mem_available()
    comment('cgroup at %d MiB, limit %d MiB above it' %
                (base // MIB, LIMIT // MIB))

    # One QP of the device's maximum size is more than the limit.
    try:
        qp = big_qp(pd, cq, attr.max_qp_wr, attr.max_sge)
        qp.close()
        check(False, 'a maximum-size QP (%d WRs, %d SGEs) is refused in a '
              '%d MiB cgroup' % (attr.max_qp_wr, attr.max_sge, LIMIT // MIB),
              'created')
    except PyverbsError as x:
        check(errno_of(x) == errno.ENOMEM,
              'a maximum-size QP (%d WRs, %d SGEs) is refused with ENOMEM '
              'in a %d MiB cgroup' % (attr.max_qp_wr, attr.max_sge,
                                      LIMIT // MIB), str(x))

    # An ODP MR over 32 GiB: sroce's page array for it alone is 64 MiB.
    if ctx.query_device_ex().odp_caps.general_caps & ODP_SUPPORT:
        try:
            odp_mr(pd, 32 << 30).close()
            check(False, 'an ODP MR of 32 GiB is refused in a %d MiB cgroup'
                  % (LIMIT // MIB), 'created')
        except PyverbsError as x:
            check(errno_of(x) == errno.ENOMEM, 'an ODP MR of 32 GiB is '
                  'refused with ENOMEM in a %d MiB cgroup' % (LIMIT // MIB),
                  str(x))
    else:
        comment('no ODP on this kernel: no ODP MR tried')

    # QPs, CQs and SRQs in turn until refused, or until the guest has lost
    # RUNAWAY bytes (the charge is missing).
    objs, refused, kinds = [], None, {'QP': 0, 'CQ': 0, 'SRQ': 0}
    makers = [('QP', lambda: big_qp(pd, cq)),
              # 4 MiB each: a max_cqe CQ (64 MiB) alone is past the limit.
              ('CQ', lambda: CQ(ctx, min(attr.max_cqe, 65535))),
              ('SRQ', lambda: SRQ(pd, SrqInitAttr(SrqAttr(max_wr=WR,
                                                          max_sge=SGE))))]
    i = 0
    while avail0 - mem_available() < RUNAWAY and len(objs) < 1000:
        kind, make = makers[i % len(makers)]
        i += 1
        try:
            objs.append(make())
            kinds[kind] += 1
        except PyverbsError as x:
            refused = (kind, x)
            break
    taken = avail0 - mem_available()
    made = ', '.join('%d %ss' % (n, k) for k, n in kinds.items())
    check(refused is not None and errno_of(refused[1]) == errno.ENOMEM,
          'objects are refused with ENOMEM at the cgroup\'s limit',
          'refused: %s; made %s; the guest lost %d MiB' % (
              refused and '%s: %s' % refused, made, taken // MIB))
    check(taken < LIMIT + LIMIT // 2,
          'what they took stays near the %d MiB limit' % (LIMIT // MIB),
          'the guest lost %d MiB to %s' % (taken // MIB, made))
    comment('made %s; the guest lost %d MiB; cgroup at %d MiB' % (
        made, taken // MIB, int(cg_read('memory.current')) // MIB))
    check(oom_kills() == 0, 'no OOM kill in the cgroup',
          cg_read('memory.events'))

    r = outsider(dev, attr.max_qp_wr, attr.max_sge)
    check(r.returncode == 0, 'a process outside the cgroup still creates a '
          'maximum-size QP and CQ', r.stderr[-400:])

    for o in reversed(objs):
        o.close()
    try:
        big_qp(pd, cq).close()
        check(True, 'after freeing, the cgroup creates again')
    except PyverbsError as x:
        check(False, 'after freeing, the cgroup creates again', str(x))

    for o in (cq, pd, ctx):
        o.close()
    if ip:
        heads(dev, ip)
    teardown_cgroup()
    return status()


if __name__ == '__main__':
    run(main, 'memcg.py', sys.argv[1],
        sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == '--ip' else None,
        errors=(PyverbsError, OSError, AttributeError, ValueError),
        detail=lambda x: '%s: %s' % (type(x).__name__, x))
