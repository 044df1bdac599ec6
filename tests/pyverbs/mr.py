#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Memory regions through the stock rxe provider: registration of many
shapes and sizes, access-flag rules, keys, the device limit, and nothing
left behind. One TAP-style line per check; non-zero exit on any failure."""
import errno
import os
import mmap
import sys

from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError

from sroce_lib import check, e, expect_errno, status, up_to_limit


LW, RW, RR, RA = (e.IBV_ACCESS_LOCAL_WRITE, e.IBV_ACCESS_REMOTE_WRITE,
                  e.IBV_ACCESS_REMOTE_READ, e.IBV_ACCESS_REMOTE_ATOMIC)


def main(dev, full_limits):
    ctx = Context(name=dev)
    pd = PD(ctx)
    attr = ctx.query_device()

    mrs = []
    bad = []
    for size in (1, 7, 4095, 4096, 4097, 65536, 1 << 20, 3 * 4096 + 5,
                 64 << 20):
        for access in (0, LW, LW | RW, LW | RR, LW | RW | RR | RA):
            mr = MR(pd, size, access)
            if mr.lkey != mr.rkey or (mr.lkey & 0xff) == 0 or \
               (mr.lkey >> 8) == 0:
                bad.append((size, access, hex(mr.lkey)))
            mrs.append(mr)
    check(not bad, '%d MRs of sizes 1 B..64 MiB, all access mixes' % len(mrs),
          bad)
    keys = [m.lkey for m in mrs]
    check(len(set(keys)) == len(keys), 'keys are unique')
    check(len(set(k >> 8 for k in keys)) == len(keys),
          'key indices are unique (index << 8 | key byte)')
    # One rkey must not tell the next: the key bytes are drawn at random,
    # so consecutive ones are not each the last plus one.
    steps = [(b & 0xff) - (a & 0xff) for a, b in zip(keys, keys[1:])]
    seq = sum(1 for d in steps if d in (1, -254))
    check(seq < len(steps) // 2, 'key bytes of consecutive MRs not sequential',
          '%d of %d steps were +1' % (seq, len(steps)))
    for m in mrs:
        m.close()

    # Unaligned start inside an anonymous mapping, crossing pages.
    buf = mmap.mmap(-1, 5 * 4096)
    import ctypes
    base = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    ok = True
    for off, length in ((1, 4096), (4095, 2), (100, 3 * 4096), (0, 5 * 4096)):
        mr = MR(pd, length, LW | RW, address=base + off)
        ok = ok and mr.length == length
        mr.close()
    check(ok, 'MRs at unaligned addresses spanning pages')
    del base
    buf.close()

    expect_errno(lambda: MR(pd, 4096, RW), errno.EINVAL,
                 'remote write without local write refused with EINVAL')
    expect_errno(lambda: MR(pd, 4096, RA), errno.EINVAL,
                 'remote atomic without local write refused with EINVAL')

    try:
        mr = MR(pd, 0, LW)
        check(True, 'zero-length MR registers')
        mr.close()
    except PyverbsRDMAError as e:
        check(False, 'zero-length MR registers', 'errno %d' % e.error_code)

    if full_limits:
        # Each kernel PD without a local DMA lkey holds one DMA MR.
        kmr = int(os.environ.get('SROCE_KERNEL_PD', '0'))
        up_to_limit(lambda: MR(pd, 8, LW), attr.max_mr, kmr, 'MR', 'max_mr')
    pd.close()
    ctx.close()
    return status()


if __name__ == '__main__':
    sys.exit(main(sys.argv[1], '--full' in sys.argv))
