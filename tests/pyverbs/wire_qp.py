#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Hand-built requests on the wire against live RC QPs of another guest.

  wire_qp.py target DEV --ip A.B.C.D --peer A.B.C.D --json F --done F
  wire_qp.py send IFACE --src A.B.C.D --dst A.B.C.D --json F

The target guest creates one RC QP per case (RTS, its peer a QP number on
the sending guest that no verbs QP owns), an MR filled with a pattern,
writes their numbers and keys to --json, and waits for --done. The sending
guest builds every request byte by byte (send_roce.py's frames, ICRC by
zlib) through an AF_PACKET socket, reads the target's answers off the same
interface, and checks each one: opcode, PSN, AETH syndrome and MSN, READ
data, the atomic's original value, and the ICRC. The target then checks
what the requests may and may not have done: the MR's bytes, its QPs'
states and the receive completions.

The cases: one QP takes a run of valid requests mixed with bad ones that
must not hurt it (a replayed atomic answered from memory, an RNR NAK, one
sequence NAK per gap, headers cut short, a duplicate WRITE that must not be
executed again); the others each take one request that breaks a rule and
must get the NAK IBTA names for it, with the QP in ERR and memory
untouched.
"""
import json
import os
import select
import socket
import struct
import sys
import time
from types import SimpleNamespace

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), 'guest'))

# BTH opcodes (RC) and AETH syndromes.
SEND_ONLY, SEND_ONLY_INV = 0x04, 0x17
WRITE_MIDDLE, WRITE_ONLY = 0x07, 0x0a
READ_REQ, READ_RESP_ONLY, ACK, ATOMIC_ACK = 0x0c, 0x10, 0x11, 0x12
CMP_SWAP, FETCH_ADD, ATOMIC_WRITE = 0x13, 0x14, 0x1d
NAK_SEQ, NAK_INV, NAK_ACC = 0x60, 0x61, 0x62
RNR_TIMER = 12
SLOT = 256		# bytes of the MR per case
MR_LEN = 8192
PEER_QPN = 0xf000	# + case index: the sender's side, no QP of its own
W = 0x1122334455667788

A_LW, A_RW, A_RR, A_AT = 1, 2, 4, 8	# IBV_ACCESS_*
ALL = A_LW | A_RW | A_RR | A_AT


def reth(va, rkey, length):
    return struct.pack('!QII', va, rkey, length)


def atmeth(va, rkey, swap_add, compare=0):
    return struct.pack('!QIQQ', va, rkey, swap_add, compare)


def cases(j):
    """The cases, from the target's numbers: name -> dict.

    send: [(opcode, psn, headers and payload)], all with AckReq;
    want: the answers, in order: (opcode, psn, syndrome or 'ack', msn or
    None, data or None); recv: receive buffer lengths the target posts,
    rwc: their expected completion statuses; fatal: the QP ends in ERR;
    mem: {MR offset: bytes} the requests leave there (all else untouched).
    """
    rk, va, pmtu, v0 = j['rkey'], j['va'], j['pmtu'], j['v0']
    m64 = (1 << 64) - 1
    c = {}
    s0 = va	# slot 0
    c['valid and invalid requests on one QP'] = dict(
        access=ALL, recv=[64], rwc=['SUCCESS'], fatal=False,
        send=[
            (WRITE_ONLY, 0, reth(s0, rk, 8) + b'ABCDEFGH'),
            (READ_REQ, 1, reth(s0, rk, 8)),
            (FETCH_ADD, 2, atmeth(s0 + 64, rk, 5)),
            (FETCH_ADD, 2, atmeth(s0 + 64, rk, 5)),	# replay
            (CMP_SWAP, 3, atmeth(s0 + 64, rk, W, (v0 + 5) & m64)),
            (SEND_ONLY, 4, b'sixteen bytes..!'),
            (SEND_ONLY, 5, b'no receive left!'),	# RNR
            (READ_REQ, 5, reth(s0, rk, 8)[:8]),	# cut short: dropped
            (FETCH_ADD, 5, atmeth(s0 + 64, rk, 1)[:20]),	# likewise
            (WRITE_ONLY, 9, reth(s0, rk, 8) + b'ahead!!!'),	# seq NAK
            (WRITE_ONLY, 10, reth(s0, rk, 8) + b'ahead!!!'),	# no 2nd
            (WRITE_ONLY, 0, reth(s0, rk, 8) + b'replayed'),	# duplicate
            (READ_REQ, 5, reth(s0, rk, 8)),
        ],
        want=[
            (ACK, 0, 'ack', 1, None),
            (READ_RESP_ONLY, 1, 'ack', 2, b'ABCDEFGH'),
            (ATOMIC_ACK, 2, 'ack', 3, v0),
            (ATOMIC_ACK, 2, 'ack', None, v0),
            (ATOMIC_ACK, 3, 'ack', 4, (v0 + 5) & m64),
            (ACK, 4, 'ack', 5, None),
            (ACK, 5, 0x20 | RNR_TIMER, 5, None),
            (ACK, 5, NAK_SEQ, 5, None),
            (ACK, 4, 'ack', 5, None),
            (READ_RESP_ONLY, 5, 'ack', 6, b'ABCDEFGH'),
        ],
        mem={0: b'ABCDEFGH', 64: struct.pack('<Q', W)})

    def fatal(name, op, hdrs, syn, access=ALL, recv=64, rwc='WR_FLUSH_ERR'):
        c[name] = dict(access=access, recv=[recv], rwc=[rwc], fatal=True,
                       send=[(op, 0, hdrs)],
                       want=[(ACK, 0, syn, 0, None)], mem={})

    def slot():
        return va + SLOT * len(c)	# of the case about to be added

    n = 'CMP_SWAP at a misaligned address: invalid request NAK'
    fatal(n, CMP_SWAP, atmeth(slot() + 4, rk, 1, 2), NAK_INV)
    n = 'FETCH_ADD at a misaligned address: invalid request NAK'
    fatal(n, FETCH_ADD, atmeth(slot() + 2, rk, 1), NAK_INV)
    n = 'ATOMIC WRITE at a misaligned address: invalid request NAK'
    fatal(n, ATOMIC_WRITE, reth(slot() + 4, rk, 8) + b'12345678', NAK_INV)
    n = 'ATOMIC WRITE of 4 bytes: invalid request NAK'
    fatal(n, ATOMIC_WRITE, reth(slot(), rk, 4) + b'1234', NAK_INV)
    n = 'WRITE with an rkey nobody owns: remote access NAK'
    fatal(n, WRITE_ONLY, reth(slot(), rk ^ 0x7f0000, 8) + b'badrkey!',
          NAK_ACC)
    n = 'WRITE across the end of the MR: remote access NAK'
    fatal(n, WRITE_ONLY, reth(va + MR_LEN - 4, rk, 8) + b'overflow', NAK_ACC)
    n = 'READ across the end of the MR: remote access NAK'
    fatal(n, READ_REQ, reth(va + MR_LEN - 4, rk, 8), NAK_ACC)
    n = 'READ below the start of the MR: remote access NAK'
    fatal(n, READ_REQ, reth(va - 8, rk, 16), NAK_ACC)
    n = 'WRITE whose RETH length is not its payload: invalid request NAK'
    fatal(n, WRITE_ONLY, reth(slot(), rk, 16) + b'only8b!!', NAK_INV)
    n = 'WRITE MIDDLE with no WRITE FIRST: invalid request NAK'
    fatal(n, WRITE_MIDDLE, b'x' * pmtu, NAK_INV)
    n = 'WRITE ONLY longer than the path MTU: invalid request NAK'
    fatal(n, WRITE_ONLY, reth(slot(), rk, pmtu + 4) + b'y' * (pmtu + 4),
          NAK_INV)
    n = 'READ of more than 2 GiB: invalid request NAK'
    fatal(n, READ_REQ, reth(slot(), rk, (1 << 31) + 4), NAK_INV)
    n = 'FETCH_ADD on a QP without remote atomic access: remote access NAK'
    fatal(n, FETCH_ADD, atmeth(slot(), rk, 1), NAK_ACC,
          access=A_LW | A_RW | A_RR)
    n = 'WRITE on a QP without remote write access: remote access NAK'
    fatal(n, WRITE_ONLY, reth(slot(), rk, 8) + b'nowrite!', NAK_ACC,
          access=A_LW | A_RR | A_AT)
    n = 'READ on a QP without remote read access: remote access NAK'
    fatal(n, READ_REQ, reth(slot(), rk, 8), NAK_ACC,
          access=A_LW | A_RW | A_AT)
    n = 'FETCH_ADD through an MR without atomic rights: remote access NAK'
    fatal(n, FETCH_ADD, atmeth(j['va2'], j['rkey2'], 1), NAK_ACC)
    n = 'SEND longer than the receive buffer: invalid request NAK'
    fatal(n, SEND_ONLY, b'sixteen bytes..!', NAK_INV, recv=8,
          rwc='LOC_LEN_ERR')
    n = 'SEND with invalidate of an rkey nobody owns: invalid request NAK'
    fatal(n, SEND_ONLY_INV, struct.pack('!I', rk ^ 0x7f0000) + b'inv!',
          NAK_INV, rwc='REM_INV_REQ_ERR')

    # A connected QP takes packets from its peer only: the same requests
    # from a third address on the peer's subnet, or with a P_Key outside
    # the table, are dropped and counted, and change nothing. Then the
    # peer's own requests at the same PSNs are executed as if the others
    # had never come.
    s = slot()
    n = 'SEND, WRITE, READ from a third address, SEND with a foreign P_Key'
    c[n] = dict(
        access=ALL, recv=[64], rwc=['SUCCESS'], fatal=False,
        send=[
            (SEND_ONLY, 0, b'spoofed SEND....', SPOOF),
            (WRITE_ONLY, 0, reth(s, rk, 8) + b'spoofed!', SPOOF),
            (READ_REQ, 0, reth(s, rk, 8), SPOOF),
            (SEND_ONLY, 0, b'foreign P_Key...', FOREIGN_PKEY),
            (WRITE_ONLY, 0, reth(s, rk, 8) + b'the peer'),
            (SEND_ONLY, 1, b'the peer sends!!'),
        ],
        want=[(ACK, 0, 'ack', 1, None), (ACK, 1, 'ack', 2, None)],
        mem={s - va: b'the peer'})
    # The QP's own RDMA WRITE waits for its answer (long ACK timeout): a
    # NAK from a third address must not end it, the peer's ACK completes it.
    n = 'a NAK from a third address does not end a request'
    c[n] = dict(
        access=ALL, recv=[], rwc=['SUCCESS'], fatal=False, post=8,
        conn=dict(timeout=24),
        send=[
            (ACK, 0, struct.pack('!I', NAK_ACC << 24), SPOOF),
            (ACK, 0, struct.pack('!I', 0x1f << 24 | 1)),
        ],
        want=[], mem={})
    return c


# Send options: a third address on the peer's subnet as the source, a
# P_Key whose low 15 bits are not the default key's.
SPOOF = dict(src='198.18.0.99')
FOREIGN_PKEY = dict(pkey=0x8001)	# rx.sh counts 4 SPOOF and 1 of these


# --- the sending guest -----------------------------------------------------

def parse(fr, src):
    """An IPv4 RoCEv2 frame from src: (qpn, opcode, psn, aeth or None,
    rest, icrc_ok), or None."""
    import send_roce	# pylint: disable=import-outside-toplevel
    if len(fr) < 14 + 20 + 8 + 12 + 4 or fr[12:14] != b'\x08\x00':
        return None
    ip = fr[14:]
    ihl = (ip[0] & 15) * 4
    tot = struct.unpack('!H', ip[2:4])[0]
    if ip[9] != 17 or ip[12:16] != socket.inet_aton(src) or tot > len(ip):
        return None
    ip = ip[:tot]
    if struct.unpack('!H', ip[ihl + 2:ihl + 4])[0] != 4791:
        return None
    bth = ip[ihl + 8:ihl + 20]
    op = bth[0]
    qpn = struct.unpack('!I', bth[4:8])[0] & 0xffffff
    psn = struct.unpack('!I', bth[8:12])[0] & 0xffffff
    pad = (bth[1] >> 4) & 3
    body = ip[ihl + 20:-4]
    body = body[:len(body) - pad]
    aeth = None
    if op in (ACK, READ_RESP_ONLY, ATOMIC_ACK) and len(body) >= 4:
        aeth = struct.unpack('!I', body[:4])[0]
        body = body[4:]
    ok = send_roce.icrc(ip[:-4], False) == ip[-4:]
    return qpn, op, psn, aeth, body, ok


def answers(rx, src, by_qpn, secs, qpn=None, n=0):
    """Collect answers, sorted into by_qpn[qpn], for secs or until qpn has
    n of them."""
    end = time.monotonic() + secs
    while True:
        left = end - time.monotonic()
        if left <= 0 or (qpn is not None and len(by_qpn.get(qpn, [])) >= n):
            return
        if not select.select([rx], [], [], left)[0]:
            return
        p = parse(rx.recv(65536), src)
        if p:
            by_qpn.setdefault(p[0], []).append(p)


def want_str(w):
    op, psn, syn, msn, data = w
    return 'op %#x psn %d %s%s%s' % (
        op, psn, syn if syn == 'ack' else 'syndrome %#x' % syn,
        '' if msn is None else ' msn %d' % msn,
        '' if data is None else ' data %r' % (data,))


def got_str(p):
    _, op, psn, aeth, body, ok = p
    return 'op %#x psn %d aeth %s body %s%s' % (
        op, psn, 'none' if aeth is None else '%#010x' % aeth, body.hex(),
        '' if ok else ' BAD ICRC')


def matches(w, p):
    op, psn, syn, msn, data = w
    _, pop, ppsn, aeth, body, ok = p
    if pop != op or ppsn != psn or aeth is None or not ok:
        return False
    s = aeth >> 24
    if (syn == 'ack' and s & 0xe0) or (syn != 'ack' and s != syn):
        return False
    if msn is not None and aeth & 0xffffff != msn:
        return False
    if op == ATOMIC_ACK:
        return len(body) == 8 and struct.unpack('!Q', body)[0] == data
    return data is None or body == data


def send_main(a):
    import send_roce	# pylint: disable=import-outside-toplevel
    # pylint: disable-next=import-outside-toplevel
    from sroce_lib import check, status
    with open(a.json) as f:
        j = json.load(f)
    src, dst = (send_roce.ipaddress.ip_address(x) for x in (a.src, a.dst))
    tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    tx.bind((a.iface, 0))
    rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                       socket.htons(0x0800))
    rx.bind((a.iface, 0))
    smac, dmac = tx.getsockname()[4], send_roce.neigh_mac(dst)
    for i, (name, c) in enumerate(cases(j).items()):
        qpn = j['qpns'][name]
        by_qpn = {}
        for op, psn, rest, *how in c['send']:
            how = how[0] if how else {}
            pad = -len(rest) % 4 if op in (SEND_ONLY, WRITE_ONLY) else 0
            bth = struct.pack('!BBHII', op, pad << 4,
                              how.get('pkey', 0xffff), qpn, 0x80000000 | psn)
            fsrc = send_roce.ipaddress.ip_address(how.get('src', a.src))
            tx.send(send_roce.frame(fsrc, dst, smac, dmac,
                                    bth + rest + b'\0' * pad))
            # One at a time: the next waits for an answer to this one, or
            # for a short silence.
            answers(rx, a.dst, by_qpn, 0.3, PEER_QPN + i,
                    len(by_qpn.get(PEER_QPN + i, [])) + 1)
        answers(rx, a.dst, by_qpn, 0.5)
        # Only answers: a QP with a request of its own (post) sends it to
        # the peer's address too, as often as its timer says.
        got = [p for p in by_qpn.get(PEER_QPN + i, [])
               if p[1] in (ACK, READ_RESP_ONLY, ATOMIC_ACK)]
        ok = len(got) == len(c['want']) and all(
            matches(w, p) for w, p in zip(c['want'], got))
        if len(c['want']) > 1:
            for p in got:
                print('#   ' + got_str(p), flush=True)
        check(ok, name, 'want [%s], got [%s]' % (
            '; '.join(want_str(w) for w in c['want']),
            '; '.join(got_str(p) for p in got)))
    return status()


# --- the target guest ------------------------------------------------------

def target_main(a):
    # pylint: disable=import-outside-toplevel
    from pyverbs.cq import CQ
    from pyverbs.qp import QP, QPCap, QPInitAttr
    from pyverbs.wr import RecvWR
    from sroce_lib import (Env, Region, check, connect, e, gid_of, poll,
                           post_send, status, ST, QPS)

    env = Env(a.dev, a.ip)
    check(env.gid_index is not None, 'IPv4 RoCE v2 GID found in sysfs')
    if env.gid_index is None:
        return 1
    reg = Region(env, MR_LEN, ALL, seed=3)
    reg2 = Region(env, 4096, A_LW | A_RW | A_RR, seed=4)
    pmtu = 128 << env.port_mtu
    j = dict(rkey=reg.mr.rkey, va=reg.base, rkey2=reg2.mr.rkey,
             va2=reg2.base, pmtu=pmtu,
             v0=struct.unpack('<Q', reg.data[64:72])[0], qpns={})
    # The case table needs the keys; the QP numbers come after.
    cs = cases(dict(j, qpns={}))
    cq = CQ(env.ctx, 256)
    qps, rbufs = {}, {}
    for i, (name, c) in enumerate(cs.items()):
        qp = QP(env.pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq,
                                   cap=QPCap(max_send_wr=4, max_recv_wr=4)))

        connect(env, SimpleNamespace(qp=qp), PEER_QPN + i, 0, 0,
                dgid=gid_of(a.peer), access=c['access'],
                min_rnr_timer=RNR_TIMER, **c.get('conn', {}))
        rb = Region(env, 4096, A_LW, seed=10 + i)
        for k, n in enumerate(c['recv']):
            qp.post_recv(RecvWR(wr_id=i * 16 + k, num_sge=1,
                                sg=[rb.sge(0, n)]))
        if c.get('post'):
            post_send(SimpleNamespace(qp=qp), i * 16 + 8,
                      e.IBV_WR_RDMA_WRITE, [rb.sge(0, c['post'])],
                      rkey=0x1234, raddr=0x10000)
        qps[name], rbufs[name] = qp, rb
        j['qpns'][name] = qp.qp_num
    tmp = a.json + '.tmp'
    with open(tmp, 'w') as f:
        json.dump(j, f)
    os.rename(tmp, a.json)
    print('# target ready: %d QPs' % len(qps), flush=True)
    end = time.monotonic() + 300
    while not os.path.exists(a.done) and time.monotonic() < end:
        time.sleep(0.2)
    check(os.path.exists(a.done), 'the sender finished')

    wcs = {}
    for wc in poll(cq, 64, 2.0):
        wcs.setdefault(wc.wr_id // 16, []).append(wc)
    want_mem = bytearray(reg.data)
    for i, (name, c) in enumerate(cs.items()):
        st = qps[name].query(e.IBV_QP_STATE)[0].qp_state
        want = e.IBV_QPS_ERR if c['fatal'] else e.IBV_QPS_RTS
        check(st == want, '%s: QP in %s' % (name, QPS[want]), QPS.get(st, st))
        got = [ST.get(w.status, w.status) for w in wcs.get(i, [])]
        check(got == c['rwc'], '%s: receive completions %s' %
              (name, c['rwc']), got)
        for off, b in c['mem'].items():
            want_mem[off:off + len(b)] = b
    cur = reg.map[:]
    bad = [i for i in range(MR_LEN) if cur[i] != want_mem[i]]
    check(not bad, 'the MR holds what the valid requests wrote, nothing '
          'else', '%d bytes differ, first at %d' % (len(bad), bad[0])
          if bad else '')
    check(reg2.untouched(), 'the MR without atomic rights is untouched')
    rb = rbufs['valid and invalid requests on one QP']
    check(rb.map[:16] == b'sixteen bytes..!', 'the SEND landed in the '
          'receive buffer', rb.map[:16])
    for qp in qps.values():
        qp.close()
    cq.close()
    return status()


def main():
    # pylint: disable-next=import-outside-toplevel
    from sroce_lib import dev_args, role_parsers
    ap, (t, s) = role_parsers('target', 'send')
    dev_args(t)
    t.add_argument('--peer', required=True)
    t.add_argument('--json', required=True)
    t.add_argument('--done', required=True)
    s.add_argument('iface')
    s.add_argument('--src', required=True)
    s.add_argument('--dst', required=True)
    s.add_argument('--json', required=True)
    a = ap.parse_args()
    return target_main(a) if a.role == 'target' else send_main(a)


if __name__ == '__main__':
    sys.exit(main())
