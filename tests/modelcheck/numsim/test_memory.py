"""numsim.memory: the never-written check of vector accesses (the word path for aligned lanes) agrees with the
byte-by-byte reading."""
import numpy as np
import pytest

from modelcheck.numsim.memory import Allocation


def _alloc(written):
    data = np.zeros(written.size, np.uint8)
    return Allocation(0, "smem", "shared", 0x400, data.size, data, written)


@pytest.mark.parametrize("size", [1, 2, 4, 8, 16])
def test_unwritten_matches_bytewise(size):
    rng = np.random.default_rng(size)
    for trial in range(200):
        written = rng.random(1024) < (0.5 if trial % 2 else 0.999)
        alloc = _alloc(written.copy())
        align = size if trial % 3 else 1           # misaligned offsets take the byte path
        offs = (rng.integers(0, (1024 - size) // align, 32) * align).astype(np.int64)
        want = not all(written[o:o + size].all() for o in offs)
        assert alloc.unwritten(offs, size) == want
        assert alloc.unwritten(int(offs[0]), size) == (not written[offs[0]:offs[0] + size].all())


def test_all_written_is_noticed_and_kept():
    alloc = _alloc(np.ones(256, np.bool_))
    assert not alloc.unwritten(np.arange(0, 256, 8), 8)
    assert alloc.all_written
    alloc.mark_written(np.arange(0, 64, 4), 4)          # a no-op once everything is written
    assert not alloc.unwritten(np.arange(32), 1)
