# SPDX-License-Identifier: GPL-2.0
"""TAP-style result lines shared by the pyverbs tests."""
from pyverbs.pyverbs_error import PyverbsRDMAError

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
    except PyverbsRDMAError as e:
        check(e.error_code == want, name, 'errno %d' % e.error_code)
        return
    obj.close()
    check(False, name, 'no error')
