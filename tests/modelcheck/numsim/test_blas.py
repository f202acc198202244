"""`numsim.blas.product` is a @ b.T bit for bit (the BLAS thread count does not change a product), and leaves
the BLAS thread count as it found it."""
from __future__ import annotations

import numpy as np

from modelcheck.numsim import blas


def test_products_are_the_matmul_bit_for_bit():
    rng = np.random.default_rng(0)
    for _ in range(60):
        m, n, k = (int(rng.choice(s)) for s in ((64, 128, 256), (8, 64, 192, 256), (8, 16, 32, 128)))
        a, b = rng.standard_normal((m, k)), rng.standard_normal((n, k))
        assert np.array_equal(blas.product(a, b).view(np.uint64), (a @ b.T).view(np.uint64))


def test_the_thread_count_is_restored():
    calls = blas._entry_points()
    if calls is None:           # numpy without a bundled OpenBLAS: plain products
        return
    before = calls[1]()
    blas.product(np.ones((256, 16)), np.ones((256, 16)))
    assert calls[1]() == before
