"""The explorer keeps its wall-time budget on wide states: with W warps one state has W transitions and W^2
independence checks (corpus: 1,824 warps ran for minutes past a 30 s budget, checked only between states)."""
from __future__ import annotations

import time

from modelcheck.explorer import Command
from modelcheck.explorer.search import Model, search


def _wide(warps: int) -> Model:
    """Every warp initializes, arrives on and waits for its own one-count mbarrier: all warps independent."""
    programs = {}
    for w in range(warps):
        bar = ("mbarrier", 0, 64 + 8 * w)
        programs[w] = [Command(w, 0, "init", bar, count=1), Command(w, 1, "arrive", bar, count=1),
                       Command(w, 2, "wait", bar, parity=0)]
    return Model(programs, None, {})


def test_a_small_wide_model_completes():
    assert search(_wide(6)).status == "complete"


def test_the_budget_holds_within_one_wide_state():
    model = _wide(600)
    t0 = time.monotonic()
    res = search(model, max_seconds=0.5)
    elapsed = time.monotonic() - t0
    assert res.status == "limit" and res.limit == "wall_time"
    assert elapsed < 3.0, elapsed
