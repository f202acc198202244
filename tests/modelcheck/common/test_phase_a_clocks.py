"""Phase A's recorded clocks (common/phase_a.py): an event's `before` view is shared with the `after` view of the
warp's previous event; both must be the clock the warp held just before and just after the event, and stay so."""
import numpy as np

import modelcheck
from modelcheck import numsim
from modelcheck.common.phase_a import Causality
from tests.manifest import KERNELS, load_manifest, manifest_inputs


class Checked(Causality):
    """Causality keeping its own copies of each warp's clock around every event."""

    def __init__(self, checker):
        super().__init__(checker)
        self.want: dict = {}

    def on_sync(self, ev):
        if ev.details.get("async"):
            return super().on_sync(ev)
        before = self.clocks[ev.warp].copy()
        super().on_sync(ev)
        self.want[ev.seq] = (before, self.clocks[ev.warp].copy())


def test_recorded_clocks_are_the_warps_clock_around_each_event():
    entry = load_manifest()["kernels"]["gemm_2cta_clc"]
    k = modelcheck.load(KERNELS / entry["file"])
    causality = Checked("synccheck")
    res = numsim.Engine(k.func).run(manifest_inputs(k.func, entry, k.constants), observers=(causality,))
    assert res.termination == "completed"
    assert len(causality.want) > 100 and set(causality.want) == set(causality.event_clocks)
    for seq, (before, after) in causality.want.items():     # checked after the run: no view moved since
        got_before, got_after = causality.event_clocks[seq]
        assert np.array_equal(got_before.values, before) and np.array_equal(got_after.values, after), seq
