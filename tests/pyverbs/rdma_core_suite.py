#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Run rdma-core's own pyverbs test suite (the copy python3-pyverbs ships,
unpacked by the caller into DIR) against one device, unchanged, the way
its run_tests.py does, but with Python's cycle collector off.

Why: with rdma-core 56 (Debian 13, Python 3.13) tests that skip after
creating a CQ leave it in a reference cycle; when the collector later
frees the cycle, it may free the Context before the CQ, whose close then
fails (EBADF) and segfaults the interpreter a few tests on, on rdma_rxe as
on sroce, ending the whole run. Reference counting still frees everything
else in order; what is left in cycles is dropped when the process exits
(os._exit: no teardown in arbitrary order either).

A newer userland on an older kernel also meets tests of ib_core features
that kernel does not have (rdma-core 65's rdma_resolve_addrinfo needs the
IB service resolution of rdma_ucm, which 6.1 and 6.12 lack: the test fails
there with rdma_rxe as with sroce). Such a test is left out when the
kernel function it needs is not in /proc/kallsyms, and named in the output.

usage: rdma_core_suite.py DIR --dev DEV
"""
import gc
import os
import sys
import unittest
from importlib.machinery import SourceFileLoader

# test id -> (kernel function it needs, what that is)
NEEDS_KERNEL = {
    'tests.test_rdmacm.CMTestCase.test_rdmacm_async_resolve_addrinfo':
        ('ucma_resolve_ib_service', "rdma_ucm's IB service resolution"),
}


def kernel_has(func):
    """Whether the running kernel (or a loaded module) has function @func."""
    try:
        with open('/proc/kallsyms', encoding='ascii') as f:
            return any(line.split()[2] == func for line in f)
    except OSError:
        return True


def without(suite, ids):
    """A copy of @suite without the tests whose id is in @ids."""
    out = unittest.TestSuite()
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            out.addTest(without(t, ids))
        elif t.id() not in ids:
            out.addTest(t)
    return out


def main():
    top = sys.argv.pop(1)
    sys.path.insert(0, top)
    from args_parser import parser  # rdma-core's own, from DIR
    parser.parse_args()
    tests = SourceFileLoader('tests',
                             os.path.join(top, '__init__.py')).load_module()
    suite = unittest.defaultTestLoader.loadTestsFromModule(tests)
    missing = {t for t, (func, _) in NEEDS_KERNEL.items()
               if not kernel_has(func)}
    for t in sorted(missing):
        print(f'left out: {t}: this kernel has no {NEEDS_KERNEL[t][1]} '
              f'({NEEDS_KERNEL[t][0]})', flush=True)
    suite = without(suite, missing)
    gc.disable()
    # One line per test: a crash then names the test it happened in.
    res = unittest.TextTestRunner(verbosity=2).run(suite)
    return 0 if res.wasSuccessful() else 1


if __name__ == '__main__':
    rc = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(rc)
