#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Run rdma-core's own pyverbs test suite (the copy python3-pyverbs ships,
unpacked by the caller into DIR) against one device, unchanged, but without
the few tests that crash the interpreter on any device that is not theirs
in a given rdma-core release: one segfault ends the whole unittest run, so
those are left out by name and listed with the reason.

usage: rdma_core_suite.py DIR --dev DEV
"""
import os
import sys
import unittest
from importlib.machinery import SourceFileLoader

# test id -> why it cannot run on a non-mlx5 device (seen with rdma_rxe too).
CRASHERS = {
    'tests.test_mlx5_cq.DvCqTest.test_dv_cq_cqe_size_environment_var':
        'segfaults in CQ teardown on any non-mlx5 device (rdma-core 56, '
        'with rdma_rxe as well)',
}


def without(suite, ids, dropped):
    """A copy of @suite without the tests whose id is in @ids."""
    out = unittest.TestSuite()
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            out.addTest(without(t, ids, dropped))
        elif t.id() in ids:
            dropped.append(t.id())
        else:
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
    dropped = []
    suite = without(suite, CRASHERS, dropped)
    for d in dropped:
        print(f'left out: {d}: {CRASHERS[d]}', flush=True)
    # One line per test: a crash then names the test it happened in.
    res = unittest.TextTestRunner(verbosity=2).run(suite)
    return 0 if res.wasSuccessful() else 1


if __name__ == '__main__':
    sys.exit(main())
