#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Address handles through the stock rxe provider, for the device's IPv4 and
IPv6 RoCEv2 GIDs. One TAP-style line per check; non-zero exit on failure."""
import sys

from pyverbs.addr import AH, AHAttr, GlobalRoute
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsError

from sroce_lib import check, status


def main(dev):
    ctx = Context(name=dev)
    pd = PD(ctx)
    tbl = ctx.query_port(1).gid_tbl_len
    gids = {}
    for i in range(tbl):
        try:
            g = ctx.query_gid(1, i)
        except PyverbsError:
            break
        s = str(g.gid)
        if s.startswith('0000:0000:0000:0000:0000:ffff:') or \
           s.startswith('2001:0002:'):
            gids[i] = g
    check(len(gids) >= 2, 'IPv4 and IPv6 RoCEv2 GIDs found', gids)
    ahs = []
    for idx, g in gids.items():
        try:
            gr = GlobalRoute(dgid=g, sgid_index=idx, hop_limit=64)
            ahs.append(AH(pd, attr=AHAttr(gr=gr, is_global=1, port_num=1)))
            check(True, 'AH to own GID index %d (%s)' % (idx, g.gid))
        except PyverbsError as e:
            check(False, 'AH to own GID index %d' % idx, e)
    for _ in range(1000):
        ahs.append(AH(pd, attr=AHAttr(gr=GlobalRoute(
            dgid=gids[min(gids)], sgid_index=min(gids)), is_global=1,
            port_num=1)))
    check(True, '1000 more AHs created')
    for a in ahs:
        a.close()
    pd.close()
    ctx.close()
    return status()


if __name__ == '__main__':
    sys.exit(main(sys.argv[1]))
