# SPDX-License-Identifier: GPL-2.0
"""pyverbs' verbs constants as one flat namespace on every rdma-core.

Up to rdma-core 5x they are module constants of pyverbs.enums; newer
releases (65) group them in enum classes of pyverbs.libibverbs_enums
(ibv_access_flags.IBV_ACCESS_LOCAL_WRITE). The tests write
e.IBV_ACCESS_LOCAL_WRITE on either.
"""
import enum

try:
    import pyverbs.enums as _src
    _flat = {k: getattr(_src, k) for k in dir(_src) if k.startswith('IB')}
except ImportError:
    import pyverbs.libibverbs_enums as _src
    _flat = {}
    for _k in dir(_src):
        _v = getattr(_src, _k)
        if isinstance(_v, type) and issubclass(_v, enum.Enum):
            _flat.update(_v.__members__)
        elif _k.startswith('IB'):
            _flat[_k] = _v
globals().update(_flat)
