#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The IBTA 1.5 operations (FLUSH, ATOMIC WRITE) on the wire between two
guests, either device sroce or rdma_rxe: what one device sends the other
must execute and answer as IBTA says.

  ib15_peer.py target DEV --ip A.B.C.D --port P
  ib15_peer.py initiator DEV --ip A.B.C.D --peer A.B.C.D --port P
               [--target-drops-flush]

The target makes an RC QP and an MR with remote write and FLUSH_GLOBAL
over the middle page of three, and gives their numbers to the initiator
over TCP. The initiator WRITEs 300 bytes and FLUSHes their range, ATOMIC
WRITEs 8 bytes, FLUSHes the whole MR (each must complete with its own
completion opcode), then FLUSHes a range one byte past the MR, which must
end in REM_ACCESS_ERR. The target then checks that exactly those bytes of
its mapping changed. Exit status 0 when every check on this side passed.

--target-drops-flush: the target is rdma_rxe and the initiator sroce.
rdma_rxe (6.2 to at least 7.2) computes a FLUSH's ICRC over its headers
twice (Documentation/wire.rst) and so drops every FLUSH with the ICRC
IBTA defines: the WRITE and the ATOMIC WRITE must still complete, and the
FLUSH must end in RETRY_EXC_ERR, unanswered. (sroce accepts rdma_rxe's
form, so the other way round everything must work.)
"""
import json
import socket
import time

from pyverbs.pyverbs_error import PyverbsError
import sroce_lib
from sroce_lib import (Env, ExSide, LW, PAGE, RR, RW, Region, SIG, Side,
                       check, connect, e, expect, gid_of, parse_args, run,
                       wc_str)


FG = 1 << 8			# IBV_ACCESS_FLUSH_GLOBAL
DEVICE_FLUSH_GLOBAL = 1 << 38
GLOBAL = 1			# IBV_FLUSH_GLOBAL
RANGE, WHOLE_MR = 0, 1		# IBV_FLUSH_RANGE, IBV_FLUSH_MR
AW = b'sroce-AW'


def send_msg(conn, obj):
    conn.sendall((json.dumps(obj) + '\n').encode())


def recv_msg(f):
    line = f.readline()
    if not line:
        raise EOFError('the peer closed the connection')
    return json.loads(line)


def target(args, env):
    t = 'IBTA 1.5 target'
    side = Side(env)
    tgt = Region(env, 3 * PAGE, LW | RW | FG, off=PAGE, length=PAGE, seed=91)
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind((args.ip, args.port))
    lsock.listen(1)
    lsock.settimeout(120)
    conn, _ = lsock.accept()
    conn.settimeout(120)
    f = conn.makefile('r')
    send_msg(conn, {'qpn': side.qpn, 'rkey': tgt.mr.rkey,
                    'addr': tgt.addr(PAGE), 'length': PAGE})
    peer = recv_msg(f)
    connect(env, side, peer['qpn'], 0x700, 0x800, dgid=gid_of(peer['ip']),
            access=LW | RW | RR | FG)
    send_msg(conn, {'ready': True})
    done = recv_msg(f)
    want = bytearray(tgt.data)
    want[PAGE + 100:PAGE + 400] = bytes.fromhex(done['write'])
    want[PAGE + 512:PAGE + 520] = AW
    ok = tgt.map[:] == bytes(want)
    check(ok, t + ': exactly the written bytes changed', tgt.diff())
    send_msg(conn, {'ok': ok})
    conn.close()
    lsock.close()
    side.close()
    tgt.mr.close()


def post(side, wr_id, *ops):
    """One work request through the extended API: ops are (fn, args)."""
    side.qp.wr_start()
    side.qp.wr_id = wr_id
    side.qp.wr_flags = SIG
    for fn, fargs in ops:
        fn(*fargs)
    side.qp.wr_complete()


def initiator(args, env):
    t = 'IBTA 1.5 initiator'
    a = ExSide(env, e.IBV_QP_EX_WITH_RDMA_WRITE | e.IBV_QP_EX_WITH_FLUSH |
               e.IBV_QP_EX_WITH_ATOMIC_WRITE)
    src = Region(env, PAGE, LW, seed=92)
    conn = None
    end = time.monotonic() + 60
    while conn is None:
        try:
            conn = socket.create_connection((args.peer, args.port), 5)
        except OSError:
            if time.monotonic() > end:
                raise
            time.sleep(0.2)
    conn.settimeout(120)
    f = conn.makefile('r')
    tg = recv_msg(f)
    send_msg(conn, {'qpn': a.qpn, 'ip': args.ip})
    connect(env, a, tg['qpn'], 0x800, 0x700, dgid=gid_of(args.peer))
    recv_msg(f)
    base, rkey, q = tg['addr'], tg['rkey'], a.qp

    post(a, 1, (q.wr_rdma_write, (rkey, base + 100)),
         (q.wr_set_sge, (src.sge(0, 300),)))
    if args.target_drops_flush:
        post(a, 3, (q.wr_atomic_write, (rkey, base + 512, AW)))
        post(a, 2, (q.wr_flush, (rkey, base + 100, 300, GLOBAL, RANGE)))
        expect(t + ': WRITE and ATOMIC WRITE complete, the FLUSH rdma_rxe '
               'drops ends in RETRY_EXC_ERR', a.scq,
               [(1, e.IBV_WC_SUCCESS), (3, e.IBV_WC_SUCCESS),
                (2, e.IBV_WC_RETRY_EXC_ERR)], secs=60)
        return finish_initiator(conn, f, a, src, t)
    post(a, 2, (q.wr_flush, (rkey, base + 100, 300, GLOBAL, RANGE)))
    post(a, 3, (q.wr_atomic_write, (rkey, base + 512, AW)))
    post(a, 4, (q.wr_flush, (rkey, base, 0, GLOBAL, WHOLE_MR)))
    w = expect(t + ': WRITE, FLUSH of its range, ATOMIC WRITE, FLUSH of '
               'the MR complete', a.scq,
               [(i, e.IBV_WC_SUCCESS) for i in (1, 2, 3, 4)])
    if len(w) == 4:
        ops = [x.opcode for x in w]
        check(ops == [e.IBV_WC_RDMA_WRITE, e.IBV_WC_FLUSH,
                      e.IBV_WC_ATOMIC_WRITE, e.IBV_WC_FLUSH],
              t + ': completion opcodes', '; '.join(wc_str(x) for x in w))
    # Last: it ends the connection.
    post(a, 5, (q.wr_flush, (rkey, base + 1, tg['length'], GLOBAL, RANGE)))
    expect(t + ': FLUSH one byte past the MR: REM_ACCESS_ERR', a.scq,
           [(5, e.IBV_WC_REM_ACCESS_ERR)])
    return finish_initiator(conn, f, a, src, t)


def finish_initiator(conn, f, a, src, t):
    send_msg(conn, {'write': src.data[:300].hex()})
    verdict = recv_msg(f)
    check(verdict['ok'], t + ': the target found exactly those bytes '
          'changed')
    conn.close()
    a.close()
    src.mr.close()


def main():
    args = parse_args(('--peer', {}),
                      ('--port', {'type': int, 'required': True}),
                      ('--target-drops-flush', {'action': 'store_true'}),
                      roles=('target', 'initiator'))
    env = Env(args.dev, args.ip)
    check(env.gid_index is not None, 'IPv4 RoCE v2 GID %s found' % env.gid)
    caps = env.ctx.query_device_ex().device_cap_flags_ex
    check(caps & DEVICE_FLUSH_GLOBAL, '%s offers global FLUSH' % args.dev,
          hex(caps))
    if sroce_lib.failed:
        return 1
    t0 = time.monotonic()
    if args.role == 'target':
        target(args, env)
    else:
        initiator(args, env)
    return env.finish('ib15_peer.py ' + args.role, t0)


if __name__ == '__main__':
    run(main, 'ib15_peer.py',
        errors=(PyverbsError, OSError, EOFError, ValueError))
