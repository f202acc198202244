"""2-CTA tcgen05 (ops/pair.py, ops/umma2.py) and cluster launch control (ops/clc.py) on kernel files."""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import ir
import modelcheck
from modelcheck import numsim
from modelcheck.numsim.engine import Engine
from modelcheck.numsim.trace import Observer
from tests.manifest import INPUT_BUILDERS, KERNELS


def _builder():
    spec = importlib.util.spec_from_file_location("_inputs_gemm_persistent", INPUT_BUILDERS / "gemm_persistent.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


g = _builder()


def _gemm(name: str):
    kernel = modelcheck.load(KERNELS / f"{name}.py")
    consts = kernel.constants
    return kernel, consts, g.gemm_persistent(consts)


@pytest.mark.parametrize("policy", ["steal", "fail"])
def test_2cta_clc_gemm_matches_numpy(policy):
    kernel, consts, inputs = _gemm("gemm_2cta_clc")
    res = Engine(kernel.func, clc_policy=policy).run(inputs)
    assert res.termination == "completed" and res.diagnostics == ()
    np.testing.assert_allclose(res.outputs["D"], g.reference(consts), rtol=1e-4, atol=1e-3)


def test_clc_steal_cancels_every_pending_cluster():
    kernel, consts, inputs = _gemm("gemm_2cta_clc")
    seen = []

    class Obs(Observer):
        def on_sync(self, ev):
            if ev.details.get("kind") == "clc.try_cancel" and ev.kind == "mbarrier.complete_tx":
                seen.append(ev.details.get("cancelled_cluster"))

    numsim.run(kernel.func, inputs, observers=[Obs()])
    # the four CTAs of the cluster receive each answer (multicast): clusters 1 and 2 are taken, then none remain
    assert seen == [1] * 4 + [2] * 4 + [None] * 4


def test_odd_cta_issue_is_pair_misuse():
    res = numsim.run(modelcheck.load(KERNELS / "cta_pair_odd_issue.py").func, {"out": np.zeros((2, 128), np.float32)})
    assert [d.kind for d in res.diagnostics] == ["tcgen_cta_pair_misuse"]
    fixed = numsim.run(modelcheck.load(KERNELS / "cta_pair_odd_issue_fixed.py").func,
                       {"out": np.zeros((2, 128), np.float32)})
    assert fixed.diagnostics == () and (fixed.outputs["out"] == 16).all()


def test_cta_group_2_classification():
    alloc = ir.ops.classify("tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32", ("uint32", "uint32"))
    assert alloc.supported and alloc.quals["cta_group"] == "2"
    cp = ir.ops.classify("tcgen05.cp.cta_group::2.128x256b", ("uint32", "uint64"))
    assert cp.supported and cp.quals["cta_group"] == "2"
    shift = ir.ops.classify("tcgen05.shift.cta_group::2.down", ("uint32",))
    assert not shift.supported and "cta_group::2" in shift.why_unsupported
    q = ir.ops.classify("clusterlaunchcontrol.query_cancel.get_first_ctaid::y.b32.b128", ("uint32", "uint128"))
    assert q.supported and q.quals["query"] == "get_first_ctaid::y"


@pytest.mark.parametrize("answers", [(False,), (True, False), (False, False)])
def test_forced_clc_answers_take_the_other_exit_path(answers):
    """A request that lands while a cluster is pending is a choice point: forced to 'none remain', the
    running cluster exits and the pending ones launch and run their own tiles; numerics are the same."""
    kernel, consts, inputs = _gemm("gemm_2cta_clc")
    res = Engine(kernel.func, clc_answers=answers).run(inputs)
    assert res.termination == "completed" and res.diagnostics == ()
    assert res.stats["clc"]["choices"][:len(answers)] == list(answers)
    assert res.stats["clc"]["cancels"] == sum(res.stats["clc"]["choices"])
    np.testing.assert_allclose(res.outputs["D"], g.reference(consts), rtol=1e-4, atol=1e-3)


def test_multicast_pair_loads_complete_on_the_even_cta_of_each_destination_pair():
    """TMA .cta_group::2.multicast::cluster (PTX ISA 9.7.9.25.5.1): each destination CTA's bytes signal the CTA of
    its pair with the parity of mbar's CTA; pair 0's copies of A land in pair 1 and count on its even CTA."""
    kernel, consts, inputs = _gemm("gemm_2cta_clc")
    landed = []

    class Obs(Observer):
        def on_sync(self, ev):
            if ev.details.get("kind") == "tma.g2s" and ev.kind == "async.issue":
                landed.append((ev.cta, ev.details.get("target_cta", ev.cta), ev.barrier[1]))

    res = numsim.run(kernel.func, inputs, observers=[Obs()])
    assert res.termination == "completed"
    first = [x for x in landed if x[0] < 4]         # cluster 0's CTAs, one row block per round
    assert {(1, 3, 2), (1, 1, 0), (0, 2, 2), (0, 0, 0), (3, 3, 2), (2, 2, 2)} <= set(first)
    assert all(b % 2 == 0 for _, _, b in landed)


def test_multicast_pair_load_is_modeled():
    info = ir.ops.classify("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                           ".cta_group::2.multicast::cluster", ("uint64", "uint64", "int32", "int32", "uint32",
                                                                "uint16"))
    assert info.supported
