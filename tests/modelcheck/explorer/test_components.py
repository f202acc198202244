"""`verify_whole(components=True)` searches each set of warps that share no resource with the others on its own
(explorer/__init__.py): the same verdict as the one search of the product, in the sum of the components' states
rather than their product.  Phase B falls back to it when a projection leaves the run's generation assignment."""
from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modelcheck import explorer
from modelcheck.explorer import Programs
from tests.modelcheck.explorer.support import ring_programs

SETTINGS = dict(deadline=None, database=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


def _side_by_side(a: Programs, b: Programs) -> Programs:
    """a and b as two CTAs of one launch: b's warps and resources renumbered past a's."""
    shift = max(a.warps) + 1
    cta = 1 + max(c.resource[1] for c in a.commands())

    def moved(c):
        return replace(c, warp=c.warp + shift, resource=(c.resource[0], c.resource[1] + cta, c.resource[2]))
    warps = {w: list(p) for w, p in a.warps.items()}
    warps.update({w + shift: [moved(c) for c in p] for w, p in b.warps.items()})
    names = dict(a.resource_names)
    names.update({(r[0], r[1] + cta, r[2]): f"{n} (CTA 2)" for r, n in b.resource_names.items()})
    return Programs(warps, names)


def _ring(**kw):
    config = {"PRODUCERS": 1, "CONSUMERS": 2, "STAGES": 2, "ROUNDS": 3, "FULL_COUNT": 1, "EMPTY_COUNT": 2}
    config.update(kw)
    return ring_programs(config, halting=False)[0]


def test_two_independent_ctas_are_two_components():
    both = _side_by_side(_ring(), _ring())
    assert len(explorer._components(both)) == 2
    one = explorer.verify_whole(both)
    split = explorer.verify_whole(both, components=True)
    assert one.status == split.status == "complete"
    assert split.states < one.states          # a sum of the two, not their product


@pytest.mark.parametrize("bad", [{"EMPTY_COUNT": 1}, {"EMPTY_WAIT": 0}, {"CONSUMER_START": 1}])
def test_a_failing_component_fails_the_product(bad):
    both = _side_by_side(_ring(), _ring(**bad))
    one = explorer.verify_whole(both)
    split = explorer.verify_whole(both, components=True)
    assert one.status != "complete" and split.status == one.status


@settings(max_examples=30, **SETTINGS)
@given(a=st.fixed_dictionaries({"STAGES": st.integers(1, 2), "ROUNDS": st.integers(1, 3),
                                "EMPTY_COUNT": st.sampled_from([1, 2, 3]), "ASYNC": st.sampled_from([0, 1])}),
       b=st.fixed_dictionaries({"STAGES": st.integers(1, 2), "ROUNDS": st.integers(1, 3),
                                "FULL_COUNT": st.sampled_from([1, 2]), "CONSUMER_START": st.sampled_from([0, 1])}))
def test_components_agree_with_the_product(a, b):
    both = _side_by_side(_ring(**a), _ring(**b))
    one = explorer.verify_whole(both, max_states=60_000)
    split = explorer.verify_whole(both, components=True, max_states=60_000)
    if one.status != "limit":
        assert split.status == one.status


def test_cp_async_arrivals_carry_their_generation():
    """cp.async.mbarrier.arrive's issue records the generation it was issued in, as tcgen05.commit's does: without
    it every schedule looked like a deviation from the run, and phase B searched the whole program (on a
    1,824-warp corpus launch: past its time budget) instead of certifying the barrier."""
    import modelcheck
    from modelcheck.synccheck import check
    from tests.manifest import KERNELS
    r = check(modelcheck.load(KERNELS / "cp_async_overtaking_fixed.py").func, None)
    assert r.verdict == "clean"
    v = r.phase_b
    assert v.status == "complete" and v.deviation is None and v.certified == v.projections
