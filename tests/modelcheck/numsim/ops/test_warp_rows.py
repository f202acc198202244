"""shfl.sync's whole-cohort test (`ops/warp._rows_members_active`): its shortcut for a full member mask with no
lane exited or outside the launch answers as the general test does (the member mask as a lane vector)."""
from types import SimpleNamespace

import numpy as np

from modelcheck.numsim.ops.warp import FULL, _rows_members_active


def test_full_member_mask_shortcut_agrees_with_the_general_test():
    rng = np.random.default_rng(5)
    for _ in range(300):
        rows = rng.integers(1, 6)
        kind = rng.integers(0, 3, size=rows)          # a row: no lane active, all active, or some
        mask = np.concatenate([np.zeros(32, bool) if k == 0 else np.ones(32, bool) if k == 1
                               else rng.integers(0, 2, size=32).astype(bool) for k in kind])
        w = SimpleNamespace(mask=mask, full_mask=None, exited=None)
        vector = np.full(mask.size, FULL, dtype=np.uint32)
        assert _rows_members_active(w, FULL) == _rows_members_active(w, vector), kind
