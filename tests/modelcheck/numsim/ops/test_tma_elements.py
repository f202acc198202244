"""TMA element moves (`ops/tma.read_elements` / `write_elements`) agree with their readable byte-index form,
aligned (whole words) and not."""
from __future__ import annotations

import numpy as np
import pytest

from modelcheck.numsim.ops import tma


@pytest.mark.parametrize("esz", [1, 2, 4, 8, 16])
@pytest.mark.parametrize("aligned", [True, False])
def test_element_moves_agree_with_the_byte_index_form(esz, aligned):
    rng = np.random.default_rng(esz)
    data = rng.integers(0, 256, size=4099, dtype=np.uint8)
    offs = rng.integers(0, (data.size - esz) // esz, size=300) * esz + (0 if aligned else 1)
    offs = np.minimum(offs, data.size - esz).astype(np.int64)
    want = data[tma._byte_index(offs, esz)].reshape(-1, esz)
    assert np.array_equal(tma.read_elements(data, offs, esz), want)
    values = rng.integers(0, 256, size=(offs.size, esz), dtype=np.uint8)
    got, ref = data.copy(), data.copy()
    tma.write_elements(got, offs, esz, values)
    ref[tma._byte_index(offs, esz)] = values.reshape(-1)
    assert np.array_equal(got, ref)
