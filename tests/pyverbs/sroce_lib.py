# SPDX-License-Identifier: GPL-2.0
"""What the pyverbs tests share: TAP-style result lines, pyverbs' verbs
constants as one namespace on every rdma-core, the device, PD and GID
setup (Env, start), RC, UC and UD QPs with their INIT -> RTR -> RTS
transitions, posting and polling with deadlines, memory regions filled
with a pattern, and the route helpers of the unreachable-peer cases.

Every check() counts a failure in this module's `failed`; a script's exit
status is non-zero when any check failed (status(), Env.finish).
"""
import argparse
import ctypes
import enum
import errno
import ipaddress
import mmap
import os
import subprocess
import sys
import time
import types

from pyverbs.addr import AH, AHAttr, GID, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsError, PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPEx, QPInitAttr, QPInitAttrEx
from pyverbs.wr import RecvWR, SendWR, SGE

# --- TAP ---------------------------------------------------------------------

failed = 0


def check(ok, name, detail=''):
    """Print one result line; count it if it failed."""
    global failed
    print(('ok - ' if ok else 'not ok - ') + name +
          (': ' + str(detail) if detail and not ok else ''), flush=True)
    if not ok:
        failed += 1


def expect_errno(fn, want, name):
    """fn() must raise PyverbsRDMAError with errno want."""
    try:
        obj = fn()
    except PyverbsRDMAError as x:
        check(x.error_code == want, name, 'errno %d' % x.error_code)
        return
    obj.close()
    check(False, name, 'no error')


def comment(msg):
    print('# ' + msg, flush=True)


def status():
    """The exit status of a script: 1 if any check failed."""
    return 1 if failed else 0


def run(main, name, *args, errors=(PyverbsError,), detail=str):
    """sys.exit() with main(*args); an exception of the classes errors out
    of it fails one more check, 'NAME ran to the end'."""
    try:
        sys.exit(main(*args))
    except errors as x:
        check(False, name + ' ran to the end', detail(x))
        sys.exit(1)


def up_to_limit(make, n, kernel, what, limit):
    """make() n - kernel times (the device's limit n, less what ib_core
    holds of it); then one more must fail with ENOMEM. Closes them all."""
    objs = []
    try:
        for _ in range(n - kernel):
            objs.append(make())
    except PyverbsRDMAError as x:
        check(False, '%d %ss allocated' % (n - kernel, what),
              'failed at %d: errno %d' % (len(objs), x.error_code))
    else:
        check(True, '%d %ss allocated (+%d of the kernel)' %
              (n - kernel, what, kernel))
        expect_errno(make, errno.ENOMEM,
                     '%s above %s refused with ENOMEM' % (what, limit))
    for o in objs:
        o.close()


# --- Verbs constants ---------------------------------------------------------

def _flat_enums():
    """Up to rdma-core 5x the constants are module constants of
    pyverbs.enums; newer releases (65) group them in enum classes of
    pyverbs.libibverbs_enums (ibv_access_flags.IBV_ACCESS_LOCAL_WRITE).
    The tests write e.IBV_ACCESS_LOCAL_WRITE on either."""
    try:
        import pyverbs.enums as src
        return {k: getattr(src, k) for k in dir(src) if k.startswith('IB')}
    except ImportError:
        import pyverbs.libibverbs_enums as src
    flat = {}
    for k in dir(src):
        v = getattr(src, k)
        if isinstance(v, type) and issubclass(v, enum.Enum):
            flat.update(v.__members__)
        elif k.startswith('IB'):
            flat[k] = v
    return flat


e = types.SimpleNamespace(**_flat_enums())

LW, RW, RR = (e.IBV_ACCESS_LOCAL_WRITE, e.IBV_ACCESS_REMOTE_WRITE,
              e.IBV_ACCESS_REMOTE_READ)
SIG = e.IBV_SEND_SIGNALED
PAGE = mmap.PAGESIZE
POLL_SECS = 10.0	# the longest any expected completion may take

ST = {}
for _n in ('SUCCESS', 'LOC_LEN_ERR', 'LOC_QP_OP_ERR', 'LOC_PROT_ERR',
           'WR_FLUSH_ERR', 'MW_BIND_ERR', 'BAD_RESP_ERR', 'LOC_ACCESS_ERR',
           'REM_INV_REQ_ERR', 'REM_ACCESS_ERR', 'REM_OP_ERR',
           'RETRY_EXC_ERR', 'RNR_RETRY_EXC_ERR', 'REM_INV_RD_REQ_ERR',
           'REM_ABORT_ERR', 'GENERAL_ERR', 'RESP_TIMEOUT_ERR', 'FATAL_ERR'):
    ST[getattr(e, 'IBV_WC_' + _n)] = _n
QPS = {e.IBV_QPS_RESET: 'RESET', e.IBV_QPS_INIT: 'INIT', e.IBV_QPS_RTR: 'RTR',
       e.IBV_QPS_RTS: 'RTS', e.IBV_QPS_SQD: 'SQD', e.IBV_QPS_SQE: 'SQE',
       e.IBV_QPS_ERR: 'ERR'}

RTR_MASK = (e.IBV_QP_STATE | e.IBV_QP_AV | e.IBV_QP_PATH_MTU |
            e.IBV_QP_DEST_QPN | e.IBV_QP_RQ_PSN |
            e.IBV_QP_MAX_DEST_RD_ATOMIC | e.IBV_QP_MIN_RNR_TIMER)
RTS_MASK = (e.IBV_QP_STATE | e.IBV_QP_SQ_PSN | e.IBV_QP_TIMEOUT |
            e.IBV_QP_RETRY_CNT | e.IBV_QP_RNR_RETRY |
            e.IBV_QP_MAX_QP_RD_ATOMIC)
INIT_MASK = (e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT |
             e.IBV_QP_ACCESS_FLAGS)


def pattern(n, seed):
    """n bytes that differ from a shifted copy of themselves."""
    return bytes((i * 7 + (i >> 8) * 13 + seed) & 0xff for i in range(n))


def gid_of(ip):
    """The IPv4-mapped GID of ip, as sysfs and pyverbs print it."""
    o = [int(x) for x in ip.split('.')]
    return '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' % tuple(o)


def find_gid_index(dev, gid, secs=20):
    """Index of the RoCE v2 GID gid on port 1, from sysfs."""
    d = '/sys/class/infiniband/%s/ports/1' % dev
    end = time.monotonic() + secs
    while True:
        n = len(os.listdir(d + '/gids'))
        for i in range(n):
            try:
                with open('%s/gids/%d' % (d, i)) as f:
                    if f.read().strip() != gid:
                        continue
                with open('%s/gid_attrs/types/%d' % (d, i)) as f:
                    if f.read().strip() == 'RoCE v2':
                        return i
            except OSError:
                continue
        if time.monotonic() > end:
            return None
        time.sleep(0.2)


class Counters:
    """The device's hw_counters, for deltas around a case."""

    def __init__(self, dev):
        self.dir = '/sys/class/infiniband/%s/ports/1/hw_counters' % dev

    def read(self):
        time.sleep(0.05)	# sysfs caches hw_counters for 'lifespan' ms
        out = {}
        for n in os.listdir(self.dir):
            if n == 'lifespan':
                continue
            try:
                with open(os.path.join(self.dir, n)) as f:
                    out[n] = int(f.read())
            except (OSError, ValueError):
                pass
        return out

    def delta(self, before):
        now = self.read()
        return {k: now[k] - before.get(k, 0) for k in now
                if now[k] != before.get(k, 0)}


def qp_res(dev, qpn):
    """sroce's own state of QP qpn (`rdma -dd resource show qp`): the
    drv_* attributes, names without the prefix, as ints; {} if none.
    A QP in RESET has no port yet (link DEV/-), so the records are
    picked from all of them (newer iproute2 breaks them over lines)."""
    r = subprocess.run(['rdma', '-dd', 'resource', 'show', 'qp', 'lqpn',
                        str(qpn)], capture_output=True, text=True)
    w = r.stdout.split()
    starts = [i for i, k in enumerate(w) if k == 'link'] + [len(w)]
    for a, b in zip(starts, starts[1:]):
        rec = w[a:b]
        kv = dict(zip(rec, rec[1:]))
        if kv.get('link', '').split('/')[0] == dev and \
                kv.get('lqpn') == str(qpn):
            return {k[4:]: int(v, 0) for k, v in zip(rec, rec[1:])
                    if k.startswith('drv_')}
    return {}


def wc_str(wc):
    return 'wr_id=%#x %s opcode=%d byte_len=%d flags=%#x imm=%#x qp=%#x' % (
        wc.wr_id, ST.get(wc.status, wc.status), wc.opcode, wc.byte_len,
        wc.wc_flags, wc.imm_data, wc.qp_num)


def poll(cq, n, secs=POLL_SECS):
    """Up to n completions, waiting at most secs for them."""
    got = []
    end = time.monotonic() + secs
    while len(got) < n:
        k, wcs = cq.poll(n - len(got))
        if k:
            got.extend(wcs[:k])
            continue
        if time.monotonic() >= end:
            break
        time.sleep(0.001)
    return got


def expect(name, cq, want, secs=POLL_SECS):
    """want: [(wr_id, status)] in order, and nothing more. Returns the WCs."""
    got = poll(cq, len(want), secs)
    extra = poll(cq, 8, 0.05)
    ok = len(got) == len(want) and not extra and all(
        w.wr_id == i and w.status == s for w, (i, s) in zip(got, want))
    check(ok, name, 'want [%s], got [%s]%s' % (
        ', '.join('wr_id=%#x %s' % (i, ST[s]) for i, s in want),
        '; '.join(wc_str(w) for w in got),
        (' then [%s]' % '; '.join(wc_str(w) for w in extra)) if extra else
        (' (none within %g s)' % secs if len(got) < len(want) else '')))
    return got


def expect_none(name, cq, secs=0.3):
    got = poll(cq, 8, secs)
    check(not got, name, 'got [%s]' % '; '.join(wc_str(w) for w in got))


class Side:
    """One RC QP with a send CQ and a receive CQ of its own."""

    def __init__(self, env, sig_all=1, inline=0, max_sge=8, max_wr=64,
                 rcq_size=256):
        self.scq = CQ(env.ctx, 256)
        self.rcq = CQ(env.ctx, rcq_size)
        cap = QPCap(max_send_wr=max_wr, max_recv_wr=max_wr,
                    max_send_sge=max_sge, max_recv_sge=max_sge,
                    max_inline_data=inline)
        self.qp = QP(env.pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=self.scq,
                                        rcq=self.rcq, cap=cap,
                                        sq_sig_all=sig_all))
        self.qpn = self.qp.qp_num

    def state(self):
        return self.qp.query(e.IBV_QP_STATE)[0].qp_state

    def wait_state(self, want, secs=2.0):
        """Query until the state is want (bounded); returns the last one."""
        end = time.monotonic() + secs
        while True:
            s = self.state()
            if s == want or time.monotonic() >= end:
                return s
            time.sleep(0.01)

    def close(self):
        for o in (self.qp, self.scq, self.rcq):
            try:
                o.close()
            except PyverbsError:
                pass


class ExSide(Side):
    """An RC QP made through ibv_create_qp_ex with the send operations ops
    (IBV_QP_EX_WITH_* flags), for the IBTA 1.5 ones the legacy API lacks."""

    def __init__(self, env, ops):	# pylint: disable=super-init-not-called
        self.scq = CQ(env.ctx, 64)
        self.rcq = CQ(env.ctx, 64)
        cap = QPCap(max_send_wr=16, max_recv_wr=16, max_send_sge=2,
                    max_recv_sge=2)
        attr = QPInitAttrEx(qp_type=e.IBV_QPT_RC, scq=self.scq,
                            rcq=self.rcq, cap=cap, pd=env.pd, sq_sig_all=1,
                            comp_mask=e.IBV_QP_INIT_ATTR_PD |
                            e.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
                            send_ops_flags=ops)
        self.qp = QPEx(env.ctx, attr)
        self.qpn = self.qp.qp_num


def init_attr(access):
    a = QPAttr(qp_state=e.IBV_QPS_INIT)
    a.pkey_index = 0
    a.port_num = 1
    a.qp_access_flags = access
    return a


def rtr_attr(env, dqpn, dgid, rq_psn, min_rnr_timer=12, mtu=None,
             dest_rd_atom=None, sgid_index=None):
    a = QPAttr(qp_state=e.IBV_QPS_RTR)
    a.path_mtu = mtu if mtu is not None else env.port_mtu
    a.dest_qp_num = dqpn
    a.rq_psn = rq_psn
    a.max_dest_rd_atomic = (env.rd_atom if dest_rd_atom is None
                            else dest_rd_atom)
    a.min_rnr_timer = min_rnr_timer
    sgid_index = env.gid_index if sgid_index is None else sgid_index
    a.ah_attr = AHAttr(gr=GlobalRoute(dgid=GID(dgid),
                                      sgid_index=sgid_index, hop_limit=64),
                       is_global=1, port_num=1)
    return a


def rts_attr(env, sq_psn, timeout=14, retry_cnt=7, rnr_retry=7):
    a = QPAttr(qp_state=e.IBV_QPS_RTS)
    a.sq_psn = sq_psn
    a.timeout = timeout
    a.retry_cnt = retry_cnt
    a.rnr_retry = rnr_retry
    a.max_rd_atomic = env.rd_atom
    return a


def connect(env, side, dqpn, sq_psn, rq_psn, dgid=None, access=LW | RW | RR,
            timeout=14, retry_cnt=7, rnr_retry=7, min_rnr_timer=12,
            dest_rd_atom=None, sgid_index=None):
    """RESET -> INIT -> RTR -> RTS with explicit attribute masks."""
    side.qp.modify(init_attr(access), INIT_MASK)
    side.qp.modify(rtr_attr(env, dqpn, dgid or env.gid, rq_psn,
                            min_rnr_timer, dest_rd_atom=dest_rd_atom,
                            sgid_index=sgid_index),
                   RTR_MASK)
    side.qp.modify(rts_attr(env, sq_psn, timeout, retry_cnt, rnr_retry),
                   RTS_MASK)


class Pair:
    """Requester a and responder b, connected to each other."""

    def __init__(self, env, a_kw=None, b_kw=None, a_conn=None, b_conn=None,
                 a_psn=0x1234, b_psn=0xabcd):
        self.env = env
        self.a = Side(env, **(a_kw or {}))
        self.b = Side(env, **(b_kw or {}))
        self.a_psn, self.b_psn = a_psn, b_psn
        self.a_conn = a_conn or {}
        connect(env, self.a, self.b.qpn, a_psn, b_psn, **self.a_conn)
        connect(env, self.b, self.a.qpn, b_psn, a_psn, **(b_conn or {}))

    def close(self):
        self.a.close()
        self.b.close()


def mk_send(wr_id, opcode, sges, flags=SIG, imm=None, rkey=None, raddr=0):
    if sges:
        wr = SendWR(wr_id=wr_id, opcode=opcode, num_sge=len(sges), sg=sges,
                    send_flags=flags)
    else:
        wr = SendWR(wr_id=wr_id, opcode=opcode, num_sge=1,
                    sg=[SGE(0, 0, 0)], send_flags=flags)
        wr.num_sge = 0
    if imm is not None:
        wr.imm_data = imm
    if rkey is not None:
        wr.set_wr_rdma(rkey, raddr)
    return wr


def post_send(side, *args, **kw):
    side.qp.post_send(mk_send(*args, **kw))


def post_recv(side, wr_id, sges):
    if sges:
        wr = RecvWR(wr_id=wr_id, num_sge=len(sges), sg=sges)
    else:
        wr = RecvWR(wr_id=wr_id, num_sge=1, sg=[SGE(0, 0, 0)])
        wr.num_sge = 0
    side.qp.post_recv(wr)


def sge(mr, off, length):
    return SGE(mr.buf + off, length, mr.lkey)


def filled_mr(env, n, access, seed):
    mr = MR(env.pd, n, access)
    data = pattern(n, seed)
    mr.write(data, n)
    return mr, data


class Region:
    """An anonymous mapping with an MR over [off, off + length) of it, so
    bytes on either side of the MR can be checked too."""

    def __init__(self, env, size, access, off=0, length=None, seed=1,
                 data=None):
        self.map = mmap.mmap(-1, size)
        self.cbuf = ctypes.c_char.from_buffer(self.map)
        self.base = ctypes.addressof(self.cbuf)
        self.data = pattern(size, seed) if data is None else data
        self.map[:] = self.data
        self.off = off
        self.mr = MR(env.pd, size - off if length is None else length,
                     access, address=self.base + off)

    def sge(self, off, length):
        """An SGE at offset off of the mapping (not of the MR)."""
        return SGE(self.base + off, length, self.mr.lkey)

    def addr(self, off):
        return self.base + off

    def untouched(self):
        return self.map[:] == self.data

    def diff(self):
        cur = self.map[:]
        bad = [i for i in range(len(cur)) if cur[i] != self.data[i]]
        if not bad:
            return 'no difference'
        return '%d bytes changed, first at %d, last at %d' % (
            len(bad), bad[0], bad[-1])


def mem_check(name, mr, data, off=0):
    cur = mr.read(len(data), off)
    if cur == data:
        check(True, name)
        return
    bad = [i for i in range(len(data)) if cur[i] != data[i]]
    check(False, name, '%d of %d bytes changed, first at offset %d' %
          (len(bad), len(data), off + bad[0]))


def state_check(name, side, want, settle=2.0):
    s = side.wait_state(want, settle)
    check(s == want, name, 'state %s, want %s' % (QPS.get(s, s),
                                                   QPS.get(want, want)))


def case(fn):
    """Run one group of checks; an exception fails it instead of the run."""
    def run(env, *args):
        try:
            fn(env, *args)
        except Exception as x:	# pylint: disable=broad-except
            check(False, '%s: ran to the end' % fn.__name__,
                  '%s: %s' % (type(x).__name__, x))
    run.__name__ = fn.__name__
    return run


def expect_modify_fails(name, side, attr, mask, want=errno.EINVAL):
    try:
        side.qp.modify(attr, mask)
    except PyverbsRDMAError as x:
        check(x.error_code == want, name, 'errno %d, want %d' %
              (x.error_code, want))
        return
    check(False, name, 'modify succeeded')


def expect_post_fails(name, side, want=errno.EINVAL):
    try:
        side.qp.post_send(mk_send(0xdead, e.IBV_WR_SEND, []))
    except PyverbsRDMAError as x:
        check(x.error_code == want, name, 'errno %d, want %d' %
              (x.error_code, want))
        return
    check(False, name, 'post_send succeeded')

def cleanup(p, mrs):
    p.close()
    for m in mrs:
        try:
            m.close()
        except PyverbsError:
            pass


def after_error(t, p, req_want, recv_id, mems, req_extra=()):
    """The checks every error case shares. req_want: (wr_id, status) of the
    failing WR; req_extra: WRs queued behind it (flushed); recv_id: the
    receive b had posted (flushed); mems: [(name, ok_fn, detail_fn)]."""
    expect(t + ': requester gets %s' % ST[req_want[1]], p.a.scq,
           [req_want] + [(i, e.IBV_WC_WR_FLUSH_ERR) for i in req_extra])
    state_check(t + ': requester QP in ERR', p.a, e.IBV_QPS_ERR)
    expect(t + ': responder\'s posted recv flushed (WR_FLUSH_ERR)', p.b.rcq,
           [(recv_id, e.IBV_WC_WR_FLUSH_ERR)])
    state_check(t + ': responder QP in ERR', p.b, e.IBV_QPS_ERR)
    for name, ok, detail in mems:
        check(ok(), t + ': ' + name, detail())


class Fix:
    """A connected pair with b's target MR, b's receive buffer and a's local
    buffer, each filled with a pattern."""

    def __init__(self, env, **kw):
        self.p = Pair(env, **kw)
        self.a, self.b = self.p.a, self.p.b
        self.rb, rb_data = filled_mr(env, 8192, LW | RW | RR, 3)
        self.want = bytearray(rb_data)	# what rb must hold
        self.rv, self.rv_data = filled_mr(env, 8192, LW, 4)
        self.la, self.src = filled_mr(env, 8192, LW, 5)

    def still_rts(self, t):
        state_check(t + ': requester still RTS', self.a, e.IBV_QPS_RTS, 0)
        state_check(t + ': responder still RTS', self.b, e.IBV_QPS_RTS, 0)

    def close(self):
        cleanup(self.p, [self.rb, self.rv, self.la])


def closeall(*objs, ignore=PyverbsError):
    """Close each of objs, going on past the errors of class ignore."""
    for o in objs:
        try:
            o.close()
        except ignore:
            pass


class Env:
    def __init__(self, dev, ip):
        self.dev = dev
        self.ctx = Context(name=dev)
        self.pd = PD(self.ctx)
        self.gid = gid_of(ip)
        self.gid_index = find_gid_index(dev, self.gid)
        da = self.ctx.query_device()
        self.rd_atom = max(1, min(4, da.max_qp_rd_atom))
        self.port_mtu = self.ctx.query_port(1).active_mtu

    def finish(self, name, t0):
        """Close the PD and context, report; the exit status."""
        self.pd.close()
        self.ctx.close()
        comment('%s took %.1f s, %d check(s) failed' %
                (name, time.monotonic() - t0, failed))
        return status()


def dev_args(ap):
    """The arguments every script's verbs side takes: DEV --ip A.B.C.D."""
    ap.add_argument('dev')
    ap.add_argument('--ip', required=True)


def role_parsers(*roles):
    """An argument parser with a sub-command per role (the two guests'
    sides of a test); returns it and the roles' parsers."""
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest='role', required=True)
    return ap, [sub.add_parser(r) for r in roles]


def parse_args(*extra, roles=None):
    """[ROLE] DEV --ip A.B.C.D and the (flag, argparse keywords) pairs in
    extra; ROLE, first, one of roles if given."""
    ap = argparse.ArgumentParser()
    if roles:
        ap.add_argument('role', choices=roles)
    dev_args(ap)
    for flag, kw in extra:
        ap.add_argument(flag, **kw)
    return ap.parse_args()


def start(*extra):
    """What every script here starts with: DEV --ip A.B.C.D (and the
    (flag, argparse keywords) pairs in extra), the Env and the check of its
    GID. Returns (args, env, t0); env is None when the GID is missing."""
    args = parse_args(*extra)
    t0 = time.monotonic()
    env = Env(args.dev, args.ip)
    check(env.gid_index is not None,
          'IPv4 RoCE v2 GID %s found in sysfs' % env.gid)
    return args, env if env.gid_index is not None else None, t0


# --- UC ----------------------------------------------------------------------

MTU1024 = e.IBV_MTU_1024
UC_RTR = (e.IBV_QP_STATE | e.IBV_QP_AV | e.IBV_QP_PATH_MTU |
          e.IBV_QP_DEST_QPN | e.IBV_QP_RQ_PSN)
UC_RTS = e.IBV_QP_STATE | e.IBV_QP_SQ_PSN
UC_INIT = (e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT |
           e.IBV_QP_ACCESS_FLAGS)


class UCSide(Side):
    """One UC QP with a send CQ and a receive CQ of its own (or an SRQ)."""

    # pylint: disable=super-init-not-called
    def __init__(self, env, max_wr=64, max_sge=4, srq=None, sig_all=1):
        self.scq = CQ(env.ctx, 256)
        self.rcq = CQ(env.ctx, 256)
        cap = QPCap(max_send_wr=max_wr, max_recv_wr=max_wr,
                    max_send_sge=max_sge, max_recv_sge=max_sge)
        self.qp = QP(env.pd, QPInitAttr(qp_type=e.IBV_QPT_UC, scq=self.scq,
                                        rcq=self.rcq, cap=cap, srq=srq,
                                        sq_sig_all=sig_all))
        self.qpn = self.qp.qp_num


def uc_connect(env, side, dqpn, sq_psn, rq_psn, mtu=MTU1024,
               access=LW | RW):
    """RESET -> INIT -> RTR -> RTS with only what UC needs."""
    side.qp.modify(init_attr(access), UC_INIT)
    a = QPAttr(qp_state=e.IBV_QPS_RTR)
    a.path_mtu = mtu
    a.dest_qp_num = dqpn
    a.rq_psn = rq_psn
    a.ah_attr = AHAttr(gr=GlobalRoute(dgid=GID(env.gid),
                                      sgid_index=env.gid_index, hop_limit=64),
                       is_global=1, port_num=1)
    side.qp.modify(a, UC_RTR)
    a = QPAttr(qp_state=e.IBV_QPS_RTS)
    a.sq_psn = sq_psn
    side.qp.modify(a, UC_RTS)


# --- UD ----------------------------------------------------------------------

GRH = 40
QKEY = 0x1a2b3c4d
HOP = 64	# ib_core sets a RoCE AH's hop limit from the route: 64 here


def mtu_bytes(enum):
    return 128 << enum


def gid6_of(ip6):
    return ipaddress.IPv6Address(ip6).exploded


class UDSide(Side):
    """One UD QP in RTS with a send CQ and a receive CQ of its own (or a
    shared receive queue)."""

    # pylint: disable=super-init-not-called
    def __init__(self, env, qkey=QKEY, max_wr=32, max_sge=4, srq=None,
                 cq_size=128):
        self.scq = CQ(env.ctx, cq_size)
        self.rcq = CQ(env.ctx, cq_size)
        cap = QPCap(max_send_wr=max_wr, max_recv_wr=max_wr,
                    max_send_sge=max_sge, max_recv_sge=max_sge)
        ia = QPInitAttr(qp_type=e.IBV_QPT_UD, scq=self.scq, rcq=self.rcq,
                        cap=cap, sq_sig_all=1, srq=srq)
        self.qp = QP(env.pd, ia)
        self.qpn = self.qp.qp_num
        a = QPAttr(qp_state=e.IBV_QPS_INIT)
        a.pkey_index = 0
        a.port_num = 1
        a.qkey = qkey
        self.qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX |
                       e.IBV_QP_PORT | e.IBV_QP_QKEY)
        self.qp.modify(QPAttr(qp_state=e.IBV_QPS_RTR), e.IBV_QP_STATE)
        a = QPAttr(qp_state=e.IBV_QPS_RTS)
        a.sq_psn = 0x55
        self.qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_SQ_PSN)


def make_ah(env, gid, gid_index):
    gr = GlobalRoute(dgid=GID(gid), sgid_index=gid_index, hop_limit=HOP)
    return AH(env.pd, attr=AHAttr(gr=gr, is_global=1, port_num=1))


def ud_send(side, wr_id, sges, ah, dqpn, qkey=QKEY, imm=None, flags=SIG):
    op = e.IBV_WR_SEND if imm is None else e.IBV_WR_SEND_WITH_IMM
    wr = SendWR(wr_id=wr_id, opcode=op, num_sge=len(sges), sg=sges,
                send_flags=flags)
    if imm is not None:
        wr.imm_data = imm
    wr.set_wr_ud(ah, dqpn, qkey)
    side.qp.post_send(wr)


# --- Routes ------------------------------------------------------------------

# An address beyond the guest's own subnet, reached only through a route
# the tests add (and a static neighbour entry: nobody is behind it) and
# remove once an AH or a QP holds it.
UNROUTED, UNROUTED_NET = '198.18.9.9', '198.18.9.0/24'


def ip_cmd(*args):
    r = subprocess.run(('ip',) + args, capture_output=True, text=True,
                       check=False)
    if r.returncode:
        comment('ip %s: %s' % (' '.join(args), r.stderr.strip()))
    return r.returncode == 0


def route_up(netdev):
    check(ip_cmd('route', 'replace', UNROUTED_NET, 'dev', netdev) and
          ip_cmd('neigh', 'replace', UNROUTED, 'lladdr', '02:00:00:00:00:ca',
                 'dev', netdev, 'nud', 'permanent'),
          'route and neighbour for %s added' % UNROUTED)


def route_down(netdev):
    check(ip_cmd('route', 'del', UNROUTED_NET, 'dev', netdev),
          'route to %s removed' % UNROUTED_NET)


# A second address on the netdev. What a QP or an AH sends from its GID
# has no route once the address is gone (tx_no_route). Removing the route
# to the peer is not enough: a packet leaves by its source's interface,
# on-link where no route says otherwise, as ib_core resolved the peer.
SECOND = '198.18.0.150'


def second_up(dev, netdev):
    """Add SECOND to netdev; returns the index of its GID, or None."""
    ok = ip_cmd('addr', 'add', SECOND + '/32', 'dev', netdev)
    idx = find_gid_index(dev, gid_of(SECOND)) if ok else None
    check(idx is not None, 'address %s and its GID added' % SECOND)
    return idx


def second_down(netdev):
    check(ip_cmd('addr', 'del', SECOND + '/32', 'dev', netdev),
          'address %s removed' % SECOND)


def tx_packets(netdev):
    with open('/sys/class/net/%s/statistics/tx_packets' % netdev) as f:
        return int(f.read())
