#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""ODP faults that never end: a user's own FUSE file system that does not
answer must not hang the host.

An ODP MR over a mapping of a file whose FUSE daemon never answers a READ
parks sroce's fault worker in hmm_range_fault() for good: nothing can
interrupt it. This script is that daemon (raw /dev/fuse, no library), and
a victim process that:
- WRITEs into the FUSE-backed ODP MR from --faults QP pairs, each into its
  own page: each responder's fault blocks; past the context's bound (16)
  they are not queued (the WRITEs get RNR NAKs), so the workers are not
  all taken. 280 by default, more than a default workqueue runs at once
  (256); every pair past the bound retries twice a second, a load a
  debug kernel's single vCPU does not carry when its host is busy, so
  its make check runs 40;
- where the provider has ibv_advise_mr, queues many asynchronous
  prefetches of its pages: past the bound they are refused (EBUSY);
then checks that
- another process's ODP traffic still completes (its faults find a worker);
- the victim's destroy_qp, dereg_mr and close finish promptly;
- `rdma link delete` finishes, and rmmod is refused, not hung, while the
  fault is still blocked;
- once the daemon's connection is aborted (the blocked faults fail), the
  module unloads.
It leaves sroce loaded with sroce0 on eth0 again. Run as root.

usage: odp_blocked.py DEV --ip A.B.C.D [--netdev eth0] [--faults 280]
"""
import ctypes
import errno
import json
import mmap
import os
import struct
import subprocess
import sys
import threading
import time

from pyverbs.cq import CQ
from pyverbs.mr import MR
from pyverbs.qp import QP, QPCap, QPInitAttr
from pyverbs.pyverbs_error import PyverbsError, PyverbsRDMAError
from pyverbs.wr import SGE
import sroce_lib
from sroce_lib import (LW, PAGE, RW, Pair, Region, check, comment, connect,
                       e, expect, parse_args, post_send, status)

ODP = 1 << 6			# IBV_ACCESS_ON_DEMAND
MADV_DONTNEED = 4
PREFETCH_WRITE = 1		# IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE
FILE_PAGES = 512
PREFETCHES = 300
MNT = '/tmp/sroce-fuse'
DEV = 'sroce0'

libc = ctypes.CDLL(None, use_errno=True)
libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                       ctypes.c_ulong, ctypes.c_char_p]
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]

# --- a FUSE daemon that answers everything but READ ------------------------

IN_HDR = struct.Struct('<IIQQIIII')		# fuse_in_header, 40 bytes
OUT_HDR = struct.Struct('<IiQ')			# fuse_out_header
ATTR = struct.Struct('<QQQQQQIIIIIIIIII')	# fuse_attr, 88 bytes
(LOOKUP, FORGET, GETATTR, OPEN, READ, RELEASE, FLUSH, INIT, INTERRUPT,
 BATCH_FORGET) = (1, 2, 3, 14, 15, 18, 25, 26, 36, 42)
ENOENT, ENOSYS = 2, 38


def attr(ino, mode, size):
    return ATTR.pack(ino, size, (size + 511) // 512, 0, 0, 0, 0, 0, 0,
                     mode, 1, 0, 0, 0, PAGE, 0)


class Fuse:
    """One file, /f, of FILE_PAGES pages, whose READs are never answered."""

    def __init__(self):
        os.makedirs(MNT, exist_ok=True)
        self.fd = os.open('/dev/fuse', os.O_RDWR)
        opts = 'fd=%d,rootmode=40000,user_id=0,group_id=0' % self.fd
        if libc.mount(b'sroce-fuse', MNT.encode(), b'fuse', 0,
                      opts.encode()):
            raise OSError(ctypes.get_errno(), 'mount fuse')
        self.reads = 0
        self.read_seen = threading.Event()
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()
        # Its number in fusectl, where it can be aborted: closing the
        # device would wait for the read blocked in serve().
        self.conn = os.minor(os.stat(MNT).st_dev)
        if not os.path.exists('/sys/fs/fuse/connections/%d' % self.conn):
            subprocess.run(['mount', '-t', 'fusectl', 'none',
                            '/sys/fs/fuse/connections'], check=False)

    def reply(self, unique, err=0, payload=b''):
        os.write(self.fd, OUT_HDR.pack(OUT_HDR.size + len(payload), -err,
                                       unique) + payload)

    def serve(self):
        while True:
            try:
                req = os.read(self.fd, 1 << 20)
            except OSError:
                return		# aborted or unmounted
            if not req:
                return
            _, op, unique, node = IN_HDR.unpack_from(req)[:4]
            body = req[IN_HDR.size:]
            if op == INIT:
                major, minor = struct.unpack_from('<II', body)
                out = struct.pack('<IIIIHHIIHHI', 7, min(minor, 31),
                                  1 << 17, 0, 16, 12, 1 << 17, 1, 0, 0, 0)
                self.reply(unique, 0, out.ljust(64, b'\0'))
            elif op == LOOKUP:
                if node == 1 and body.rstrip(b'\0') == b'f':
                    a = attr(2, 0o100644, FILE_PAGES * PAGE)
                    self.reply(unique, 0, struct.pack('<QQQQII', 2, 0,
                                                      3600, 3600, 0, 0) + a)
                else:
                    self.reply(unique, ENOENT)
            elif op == GETATTR:
                a = attr(1, 0o40755, 0) if node == 1 else \
                    attr(2, 0o100644, FILE_PAGES * PAGE)
                self.reply(unique, 0, struct.pack('<QII', 3600, 0, 0) + a)
            elif op == OPEN:
                self.reply(unique, 0, struct.pack('<QII', 1, 0, 0))
            elif op == READ:
                self.reads += 1		# never answered
                self.read_seen.set()
            elif op in (FORGET, BATCH_FORGET, INTERRUPT):
                pass
            elif op in (RELEASE, FLUSH):
                self.reply(unique)
            else:
                self.reply(unique, ENOSYS)

    def abort(self):
        """Abort the connection: every READ fails, the daemon ends."""
        with open('/sys/fs/fuse/connections/%d/abort' % self.conn, 'w') as f:
            f.write('1')
        self.thread.join(10)
        os.close(self.fd)
        subprocess.run(['umount', '-l', MNT], check=False)


# --- the processes using verbs ----------------------------------------------

class Lean:
    """An RC QP on shared CQs, for many of them at little cost."""

    def __init__(self, env, cq):
        cap = QPCap(max_send_wr=2, max_recv_wr=1, max_send_sge=1,
                    max_recv_sge=1)
        self.qp = QP(env.pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq,
                                        rcq=cq, cap=cap, sq_sig_all=1))
        self.qpn = self.qp.qp_num


def victim(dev, ip, faults, ready_w, go_r):
    """Block faults, more than the context's bound (one per QP pair: a
    WRITE into its own page of the FUSE-backed MR),
    and prefetches where the provider has ibv_advise_mr; then, when told,
    tear everything down and report how long each step took."""
    from sroce_lib import Env
    env = Env(dev, ip)
    f = os.open(MNT + '/f', os.O_RDWR)
    m = mmap.mmap(f, FILE_PAGES * PAGE, mmap.MAP_SHARED,
                  mmap.PROT_READ | mmap.PROT_WRITE)
    base = ctypes.addressof(ctypes.c_char.from_buffer(m))
    mr = MR(env.pd, FILE_PAGES * PAGE, LW | RW | ODP, address=base)
    src = Region(env, PAGE, LW, seed=5)
    cq = CQ(env.ctx, 2 * faults + 16)
    qps = []
    for i in range(faults):
        a, b = Lean(env, cq), Lean(env, cq)
        # The longest RNR timer: the refused retry twice a second.
        connect(env, a, b.qpn, 1, 2, min_rnr_timer=31)
        connect(env, b, a.qpn, 2, 1, min_rnr_timer=31)
        post_send(a, i, e.IBV_WR_RDMA_WRITE, [src.sge(0, 64)],
                  rkey=mr.rkey, raddr=base + (i % FILE_PAGES) * PAGE)
        qps += [a, b]
    busy = other = 0
    for i in range(PREFETCHES):
        try:
            env.pd.advise_mr(PREFETCH_WRITE, 0,
                             [SGE(base + (i % FILE_PAGES) * PAGE, PAGE,
                                  mr.lkey)])
        except PyverbsRDMAError as x:
            if x.error_code == errno.EBUSY:
                busy += 1
            elif x.error_code == errno.EOPNOTSUPP:
                break		# this rdma-core's provider has no advise_mr
            else:
                other += 1
    os.write(ready_w, b'%d %d %d\n' % (i + 1, busy, other))
    os.read(go_r, 1)
    times = []
    t = time.monotonic()
    for s in qps:
        s.qp.close()
    cq.close()
    times.append(time.monotonic() - t)
    t = time.monotonic()
    mr.close()
    src.mr.close()
    times.append(time.monotonic() - t)
    t = time.monotonic()
    env.pd.close()
    env.ctx.close()
    times.append(time.monotonic() - t)
    os.write(ready_w, b'%.2f %.2f %.2f\n' % tuple(times))
    os._exit(0)


def bystander(dev, ip):
    """Another process's ODP WRITE into dropped pages: it needs a worker.
    Exits 0 when it completes with every byte in place."""
    from sroce_lib import Env
    sroce_lib.failed = 0	# the parent's count came with the fork
    env = Env(dev, ip)
    p = Pair(env)
    tgt = Region(env, 4 * PAGE, LW | RW | ODP, seed=7)
    src = Region(env, 4 * PAGE, LW, seed=8)
    if libc.madvise(tgt.base, len(tgt.map), MADV_DONTNEED):
        os._exit(2)
    post_send(p.a, 1, e.IBV_WR_RDMA_WRITE, [src.sge(0, 3 * PAGE)],
              rkey=tgt.mr.rkey, raddr=tgt.addr(0))
    expect('a bystander\'s ODP WRITE completes', p.a.scq,
           [(1, e.IBV_WC_SUCCESS)], secs=30)
    check(tgt.map[:3 * PAGE] == src.data[:3 * PAGE],
          'a bystander\'s ODP WRITE: the bytes in place')
    p.close()
    for r in (tgt, src):
        r.mr.close()
    env.pd.close()
    env.ctx.close()
    os._exit(status())


def line(fd, secs):
    """A line from fd within secs, or None."""
    import select
    buf = b''
    end = time.monotonic() + secs
    while not buf.endswith(b'\n'):
        left = end - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        c = os.read(fd, 1)
        if not c:
            return None
        buf += c
    return buf.decode().strip()


def sh(cmd, secs):
    """Run cmd; (exit status or None when it did not end in secs, output).
    A command stuck in D state is left behind: nothing could kill it."""
    pr = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    try:
        out = pr.communicate(timeout=secs)[0]
    except subprocess.TimeoutExpired:
        return None, 'still running after %d s' % secs
    return pr.returncode, out.strip()


def cpu_times():
    """The guest's CPU time so far (/proc/stat's first line), in ticks,
    and the device's counters."""
    with open('/proc/stat') as f:
        t = [int(x) for x in f.readline().split()[1:8]]
    out = subprocess.run(['rdma', '-j', 'statistic', 'show', 'link',
                          DEV + '/1'], capture_output=True, text=True,
                         check=False).stdout
    try:
        c = json.loads(out)[0]
    except (ValueError, IndexError):
        c = {}
    return t, {k: v for k, v in c.items() if isinstance(v, int)}


def cpu_said(t0):
    """Where the guest's CPUs went since t0: the victim's RNR-NAKed
    requesters retry every 491 ms each, a load that grows with --faults."""
    t1 = cpu_times()
    d = [b - a for a, b in zip(t0[0], t1[0])]
    tot = sum(d) or 1
    comment('counters meanwhile: ' + ', '.join(
        '%s %d' % (k, v - t0[1].get(k, 0)) for k, v in sorted(t1[1].items())
        if k != 'port' and v != t0[1].get(k, 0)))
    comment('guest CPU while the bystander ran: user %d%%, system %d%%, '
            'softirq %d%%, idle %d%%' % (100 * (d[0] + d[1]) // tot,
                                         100 * d[2] // tot,
                                         100 * d[6] // tot,
                                         100 * (d[3] + d[4]) // tot))


def stuck(pid, what):
    """Say where a process that did not finish in time waits: each of its
    threads' kernel stacks here, and every task in D state in the kernel
    log (sysrq w)."""
    for tid in sorted(os.listdir('/proc/%d/task' % pid)):
        try:
            with open('/proc/%d/task/%s/stack' % (pid, tid)) as f:
                frames = f.read().split('\n')
        except OSError:
            continue
        comment('%s, thread %s: %s' % (what, tid, ' < '.join(
            fr.split()[1] for fr in frames if fr.strip())))
    with open('/proc/sysrq-trigger', 'w') as f:
        f.write('w')


def main():
    args = parse_args(('--netdev', {'default': 'eth0'}),
                      ('--faults', {'type': int, 'default': 280}))
    global DEV
    DEV = args.dev
    t0 = time.monotonic()
    subprocess.run(['modprobe', 'fuse'], check=False)
    fuse = Fuse()
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    vpid = os.fork()
    if vpid == 0:
        try:
            victim(args.dev, args.ip, args.faults, ready_w, go_r)
        except Exception as x:	# pylint: disable=broad-except
            print('# victim: %r' % x, flush=True)
        os._exit(1)
    got = line(ready_r, 300)
    check(got is not None, 'the victim set up %d blocked faults' %
          args.faults, got or 'no word in 300 s')
    check(fuse.read_seen.wait(30), 'faults are blocked in the FUSE daemon '
          '(%d READ(s) unanswered)' % fuse.reads)
    tried, busy, other = (int(x) for x in (got or '0 0 0').split())
    if tried == PREFETCHES:
        check(busy > 0 and other == 0, 'prefetches past the context\'s '
              'bound are refused with EBUSY', '%d of %d refused, %d other '
              'errors' % (busy, PREFETCHES, other))
    else:
        comment('no ibv_advise_mr in this rdma-core\'s provider: faults '
                'through QPs only')

    bpid = os.fork()
    if bpid == 0:
        try:
            bystander(args.dev, args.ip)
        except Exception as x:	# pylint: disable=broad-except
            print('# bystander: %r' % x, flush=True)
        os._exit(1)
    cpu0 = cpu_times()
    end = time.monotonic() + 60
    while time.monotonic() < end:
        pid, st = os.waitpid(bpid, os.WNOHANG)
        if pid:
            break
        time.sleep(0.2)
    cpu_said(cpu0)
    if not pid:
        stuck(bpid, 'the bystander')
    check(pid != 0 and os.waitstatus_to_exitcode(st) == 0,
          'another process\'s ODP traffic goes on beside the blocked '
          'faults', 'exit %s' % (os.waitstatus_to_exitcode(st) if pid
                                 else 'none in 60 s'))

    os.write(go_w, b'x')
    got = line(ready_r, 30)
    check(got is not None, 'destroy_qp, dereg_mr and close finish while '
          'the fault is blocked', 'took %s s' % got if got else
          'not done in 30 s')
    if got:
        os.waitpid(vpid, 0)
    else:
        stuck(vpid, 'the victim')
    rc, out = sh(['rdma', 'link', 'delete', args.dev], 30)
    check(rc == 0, 'rdma link delete finishes under the blocked fault', out)
    rc, out = sh(['rmmod', 'sroce'], 30)
    check(rc is not None and rc != 0 and
          os.path.exists('/sys/module/sroce'),
          'rmmod is refused, not hung, while the fault is blocked',
          'exit %s: %s' % (rc, out))

    fuse.abort()
    end = time.monotonic() + 30
    while time.monotonic() < end:
        rc, out = sh(['rmmod', 'sroce'], 30)
        if rc == 0 or rc is None:
            break
        time.sleep(0.5)
    check(rc == 0, 'once the daemon is gone the fault ends and the module '
          'unloads', 'exit %s: %s' % (rc, out))
    if rc is not None:
        subprocess.run(['modprobe', 'sroce'], check=False)
        subprocess.run(['rdma', 'link', 'add', args.dev, 'type', 'sroce',
                        'netdev', args.netdev], check=False)
    comment('odp_blocked.py took %.1f s' % (time.monotonic() - t0))
    return status()


if __name__ == '__main__':
    sys.exit(main())
