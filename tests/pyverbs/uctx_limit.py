#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""No user can lock the others out of the device by opening contexts.

The device offers 512 user contexts; each user may hold 64 of them. Run as
root: children that drop to other uids open contexts, one until refused.
Checks that the refusal comes at 64 with EMFILE, that another user and
root still open contexts meanwhile, and that closing gives the share back.
Prints one TAP-style line per check; exits non-zero if any failed.
"""
import errno
import os
import sys

from pyverbs.device import Context
from pyverbs.pyverbs_error import PyverbsError

import tap
from tap import check

SHARE = 64
USER_A, USER_B = 65534, 65533


def in_child(uid, fn):
    """Run fn() in a child process as uid; returns what it wrote back
    (a line), after the parent has read it and let the child go."""
    r, w = os.pipe()
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.close(go_w)
        try:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            held, out = fn()
        except Exception as x:	# pylint: disable=broad-except
            held, out = [], 'error %s: %s' % (type(x).__name__, x)
        os.write(w, (out + '\n').encode())
        os.read(go_r, 1)	# hold the contexts until told
        for c in held:
            c.close()
        os._exit(0)
    os.close(w)
    os.close(go_r)
    line = os.read(r, 4096).decode().strip()
    os.close(r)
    return pid, go_w, line


def release(pid, go_w):
    os.write(go_w, b'x')
    os.close(go_w)
    os.waitpid(pid, 0)


def open_until_refused(dev, most):
    held = []
    for _ in range(most):
        try:
            held.append(Context(name=dev))
        except PyverbsError as x:
            return held, '%d refused %s' % (len(held), getattr(
                x, 'error_code', None))
    return held, '%d none' % len(held)


def main(dev):
    pid_a, go_a, a = in_child(USER_A,
                              lambda: open_until_refused(dev, SHARE + 8))
    check(a == '%d refused %d' % (SHARE, errno.EMFILE),
          'uid %d opens %d contexts, the next refused with EMFILE' %
          (USER_A, SHARE), a)
    pid_b, go_b, b = in_child(USER_B, lambda: open_until_refused(dev, 2))
    check(b == '2 none', 'meanwhile uid %d opens contexts' % USER_B, b)
    release(pid_b, go_b)
    try:
        Context(name=dev).close()
        check(True, 'meanwhile root (CAP_SYS_RESOURCE) opens one')
    except PyverbsError as x:
        check(False, 'meanwhile root (CAP_SYS_RESOURCE) opens one', str(x))
    release(pid_a, go_a)
    pid_a, go_a, a = in_child(USER_A, lambda: open_until_refused(dev, SHARE))
    check(a == '%d none' % SHARE, 'once closed, uid %d opens %d again' %
          (USER_A, SHARE), a)
    release(pid_a, go_a)
    return 1 if tap.failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1]))
