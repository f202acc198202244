"""Matrix products of the MMA models on one BLAS thread (no engine state).

The tensor-core models multiply small float64 matrices (at most 256 x 256 x 256).  OpenBLAS hands a product past
about 2^18 multiply-adds to its thread pool, whose hand-off costs milliseconds when the cores are busy (measured on
the 2-core machine under load: a 128x16 @ 16x256 product 6 ms of CPU with two threads, 35 us with one).  The
thread count does not change the result (each element is summed the same way), so `product(a, b)` is `a @ b.T`
with numpy's bundled OpenBLAS held to one thread for the call.  Without a bundled OpenBLAS exposing its thread
entry points it is plainly `a @ b.T`.
"""
from __future__ import annotations

import numpy as np

_CALLS: list = []       # [(set_num_threads, get_num_threads)] once looked up; [None] when there are none


def _entry_points():
    if not _CALLS:
        _CALLS.append(_find())
    return _CALLS[0]


def _find():
    import ctypes
    import glob
    import os
    libs = os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs")
    for path in sorted(glob.glob(os.path.join(libs, "*openblas*.so*"))):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix, suffix in (("scipy_", "64_"), ("scipy_", ""), ("", "64_"), ("", "")):
            setter = getattr(lib, f"{prefix}openblas_set_num_threads{suffix}", None)
            getter = getattr(lib, f"{prefix}openblas_get_num_threads{suffix}", None)
            if setter is not None and getter is not None:
                setter.argtypes, setter.restype, getter.restype = [ctypes.c_int], None, ctypes.c_int
                return setter, getter
    return None


def product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b.T, on one BLAS thread."""
    calls = _entry_points()
    if calls is None:
        return a @ b.T
    setter, getter = calls
    old = getter()
    if old == 1:
        return a @ b.T
    setter(1)
    try:
        return a @ b.T
    finally:
        setter(old)
