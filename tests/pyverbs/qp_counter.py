#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Per-QP counters through `rdma statistic qp`, between RC QPs of one
device: a QP bound by hand counts its own packets and bytes exactly (one
packet per WRITE below the MTU, its ACKs received), device-only counters
are not shown for it, and the port's totals (sysfs, which adds the running
counters and those released) count every packet once, with nothing lost
when the counter goes by unbinding or by destroying its QP. Auto mode by
QP type binds both QPs of a new pair to one counter.

usage: qp_counter.py DEV --ip A.B.C.D
"""
import json
import subprocess
import sys

from sroce_lib import (Counters, Fix, check, comment, e, expect, post_send,
                       sge, start, status)


K = 20
N = 200		# bytes per WRITE: one packet
TRAFFIC = ('rx_packets', 'rx_bytes', 'tx_packets', 'tx_bytes')
DEV_ONLY = ('rx_icrc_errors', 'rx_drop_no_qp', 'cq_overflow', 'link_downed',
            'rx_flush_icrc_rxe', 'rx_drop_pkey')


def rdma(*args):
    r = subprocess.run(('rdma',) + args, capture_output=True, text=True)
    if r.returncode:
        comment('rdma %s: %s' % (' '.join(args), r.stderr.strip()))
    return r


def counters(dev):
    """The QP counters of the port: {cntn: (values, [lqpn])}."""
    r = rdma('-j', 'statistic', 'qp', 'show', 'link', dev + '/1')
    out = {}
    try:
        entries = json.loads(r.stdout or '[]')
    except ValueError:
        comment('unparsable: ' + r.stdout[:200])
        return out
    for ent in entries:
        if 'cntn' not in ent:
            continue
        vals = {}
        for k, v in ent.items():
            if isinstance(v, int) and k not in ('ifindex', 'port', 'cntn',
                                                'pid'):
                vals[k] = v
        for k, v in ent.get('hwcounters', {}).items() if isinstance(
                ent.get('hwcounters'), dict) else []:
            vals[k] = v
        qpns = ent.get('lqpn', [])
        if isinstance(qpns, dict):
            qpns = list(qpns.values())
        qpns = [q if isinstance(q, int) else q.get('lqpn') for q in qpns]
        out[ent['cntn']] = (vals, qpns)
    return out


def of_qp(dev, qpn):
    for cntn, (vals, qpns) in counters(dev).items():
        if qpn in qpns:
            return cntn, vals
    return None, {}


def writes(f, base, n=K):
    for i in range(n):
        post_send(f.a, base + i, e.IBV_WR_RDMA_WRITE, [sge(f.la, 0, N)],
                  rkey=f.rb.rkey, raddr=f.rb.buf)
    return expect('%d WRITEs of %d bytes complete' % (n, N), f.a.scq,
                  [(base + i, e.IBV_WC_SUCCESS) for i in range(n)])


def traffic(d):
    return {k: d.get(k, 0) for k in TRAFFIC}


def main():
    args, env, _ = start()
    if not env:
        return 1
    dev = args.dev
    port = Counters(dev)

    # Bound by hand: the requester's own traffic, exactly.
    f = Fix(env)
    r = rdma('statistic', 'qp', 'bind', 'link', dev + '/1', 'lqpn',
             str(f.a.qpn))
    check(r.returncode == 0, 'rdma statistic qp bind: the requester QP')
    cntn, vals = of_qp(dev, f.a.qpn)
    check(cntn is not None and all(vals.get(k) == 0 for k in TRAFFIC),
          'it has a counter of its own, at 0', '%s %s' % (cntn, vals))
    check(not any(k in vals for k in DEV_ONLY),
          'the counter leaves out what no QP counts (ICRC, no QP, P_Key, '
          'CQ overflow, link down)', str(sorted(vals)))
    p0 = port.read()
    writes(f, 0x100)
    _, vals = of_qp(dev, f.a.qpn)
    d = traffic(port.delta(p0))
    comment('counter %s: %s; port: %s' % (cntn, traffic(vals), d))
    check(vals.get('tx_packets') == K,
          'the counter: %d packets sent, one per WRITE' % K,
          str(vals.get('tx_packets')))
    check(vals.get('tx_bytes', 0) >= K * N,
          'the counter: at least the %d bytes written' % (K * N),
          str(vals.get('tx_bytes')))
    acks = vals.get('rx_packets', 0)
    check(1 <= acks <= K, 'the counter: the ACKs received (1..%d)' % K,
          str(acks))
    check(d.get('tx_packets') == K + acks and d.get('rx_packets') == K + acks,
          'the port: every packet once, sent and received (%d + %d)'
          % (K, acks), str(d))
    check(d.get('tx_bytes') == d.get('rx_bytes') and
          d.get('tx_bytes', 0) > vals.get('tx_bytes', 0),
          'the port: bytes sent = bytes received, more than the counter\'s',
          str(d))

    # Unbound: the counter goes, the port's totals stay.
    p1 = port.read()
    r = rdma('statistic', 'qp', 'unbind', 'link', dev + '/1', 'cntn',
             str(cntn), 'lqpn', str(f.a.qpn))
    check(r.returncode == 0, 'rdma statistic qp unbind')
    check(of_qp(dev, f.a.qpn)[0] is None, 'the QP is in no counter any more')
    check(traffic(port.read()) == traffic(p1),
          'the port\'s totals the same after the counter went',
          '%s -> %s' % (traffic(p1), traffic(port.read())))
    writes(f, 0x200)
    d = traffic(port.delta(p1))
    check(d.get('tx_packets', 0) >= K, 'unbound, its packets count on the '
          'port', str(d))

    # Bound again, then destroyed while bound: ib_core unbinds it first.
    r = rdma('statistic', 'qp', 'bind', 'link', dev + '/1', 'lqpn',
             str(f.a.qpn))
    check(r.returncode == 0, 'bound again')
    writes(f, 0x300)
    p2 = port.read()
    f.close()
    check(traffic(port.read()) == traffic(p2),
          'destroying a bound QP loses none of its counts',
          '%s -> %s' % (traffic(p2), traffic(port.read())))
    check(not counters(dev), 'no counter left')

    # Auto mode by QP type: both QPs of a new pair in one counter.
    r = rdma('statistic', 'qp', 'set', 'link', dev + '/1', 'auto', 'type',
             'on')
    check(r.returncode == 0, 'rdma statistic qp set auto type on')
    f = Fix(env)
    ca, _ = of_qp(dev, f.a.qpn)
    cb, _ = of_qp(dev, f.b.qpn)
    check(ca is not None and ca == cb,
          'auto mode: both RC QPs bound to one counter', '%s %s' % (ca, cb))
    p3 = port.read()
    writes(f, 0x400)
    _, vals = of_qp(dev, f.a.qpn)
    d = traffic(port.delta(p3))
    check(traffic(vals) == d,
          'auto mode: the counter holds all the port\'s new traffic',
          '%s vs %s' % (traffic(vals), d))
    f.close()
    r = rdma('statistic', 'qp', 'set', 'link', dev + '/1', 'auto', 'off')
    check(r.returncode == 0, 'rdma statistic qp set auto off')
    check(not counters(dev), 'no counter left')
    return status()


if __name__ == '__main__':
    sys.exit(main())
