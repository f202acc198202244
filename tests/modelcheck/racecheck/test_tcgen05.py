"""Racecheck's tcgen05 ordering and async source lifetimes on the corpus kernels.

tcgen05 operations against each other are ordered only by tcgen05 ordering (pipelined pairs,
tcgen05.commit, wait::ld/st, and fence::before_thread_sync / after_thread_sync around a thread
sync); a commit/wait completion bridges no proxy; a bulk store reads its source from issue until
wait_group.read.  Each buggy kernel's finding is checked for kind, message, classification,
hint and which access is Prior and which Current; each fixed twin must be clean.
"""
from __future__ import annotations

import numpy as np
import pytest

import modelcheck
from modelcheck import numsim
from tests.manifest import KERNELS, inputs_builder, load_manifest

from .test_kernels import assert_points_at, line_of, only

MMA = "T.ptx.tcgen05.mma.cta_group__1.kind__f16("
LD_X1 = 'T.ptx["tcgen05.ld.sync.aligned.32x32b.x1.b32"]'
ST_X1 = 'T.ptx["tcgen05.st.sync.aligned.32x32b.x1.b32"]'
DEALLOC = "T.ptx.tcgen05.dealloc.cta_group__1.sync.aligned.b32("
ALLOC = "T.ptx.tcgen05.alloc.cta_group__1.sync.aligned.shared__cta.b32("


def _inputs(name: str, kernel):
    entry = load_manifest()["kernels"][name]
    builder = inputs_builder(entry)
    overrides = dict(builder(dict(kernel.constants))) if builder else {}
    overrides.update(entry["inputs"])
    return numsim.default_inputs(kernel.func, overrides)


def race(name: str, text: str | None = None):
    kernel = modelcheck.load(KERNELS / f"{name}.py")
    func = kernel.func if text is None else modelcheck.parse(text, path=f"{name}_variant.py")
    return modelcheck.racecheck(func, inputs=_inputs(name, kernel))


def test_mma_operand_reuse_after_commit_wait_needs_a_proxy_fence():
    name = "race_tcgen05_mma_smem_reuse"
    rep = race(name)
    f = only(rep)
    assert f.message == ("unordered read/write on smem a_s:[0, 4096) ... memory ordering failure: "
                         "no async->generic proxy bridge from shared::cta to shared::cta orders the accesses")
    d = f.details
    assert (d["access_pair"], d["ordering_domain"], d["ordering_failure"]) == \
        ("read_write", "memory", "missing_proxy_bridge")
    # the commit's wait was observed: only the bridge is missing
    assert d["proxy_bridge"] == {"prior_proxy": "async", "current_proxy": "generic", "prior_domain": "shared::cta",
                                 "current_domain": "shared::cta", "async_completion_observed": True}
    assert "fence.proxy.async" in d["hint"]
    # Prior: round 0's MMA reading the A tile; Current: round 1's generic rewrite of it
    assert_points_at(d["prior"], name, MMA, warp=0, lane=0, op="tcgen05.mma", async_op=True, access="read")
    assert d["prior"]["iters"] == [0]
    assert_points_at(d["current"], name, "a_s[i * 128 + tx] = a_img[r, i * 128 + tx]", access="write")
    assert d["current"]["iters"][0] == 1
    assert rep.verdict == "error"
    assert race(name + "_fixed").verdict == "clean"


def test_mma_operand_kernel_computes_the_two_round_product():
    """The fixed twin is a real GEMM: D = A0 . B^T + A1 . B^T (fp32 accumulation)."""
    name = "race_tcgen05_mma_smem_reuse_fixed"
    kernel = modelcheck.load(KERNELS / f"{name}.py")
    res = numsim.run(kernel.func, _inputs(name, kernel))
    assert res.verdict == "clean", res.diagnostics
    import importlib.util
    spec = importlib.util.spec_from_file_location("_mma_smem", KERNELS / "inputs" / "mma_smem.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    a, b = mod.operands(kernel.constants)
    want = sum(x.astype(np.float64) @ b.astype(np.float64).T for x in a)
    np.testing.assert_allclose(res.outputs["D"], want, rtol=1e-5, atol=1e-5)


def test_tmem_load_then_store_without_wait_ld_is_a_review():
    name = "race_tmem_ld_st_no_wait"
    rep = race(name)
    assert rep.verdict == "review"
    f = only(rep, "tmem_lifetime_review")
    assert f.status == "review"
    # all four warps' lane quarters of column 0: lane 127's cell ends at byte 127 * 32 * 4 + 4
    assert f.message == (f"unordered read/write on tmem tmem[0:32]:[0, {127 * 32 * 4 + 4}) ... completion ordering "
                         f"failure: an asynchronous access is not completed before the conflicting reuse")
    d = f.details
    assert (d["access_pair"], d["ordering_failure"]) == ("read_write", "async_lifetime_not_drained")
    assert "wait::ld" in d["reason"]
    assert_points_at(d["prior"], name, f"{LD_X1}(first[0], taddr)", op="tcgen05.ld", access="read")
    # Current: the store of the next tile (the line after `reg[0] = y[tx]`), by the same warp (the review case)
    assert d["current"]["span"].line == line_of(name, "reg[0] = y[tx]") + 1
    assert (d["current"]["op"], d["current"]["access"]) == ("tcgen05.st", "write")
    assert d["prior"]["warp"] == d["current"]["warp"]
    assert race(name + "_fixed").verdict == "clean"


def test_dealloc_while_loads_are_in_flight_is_a_race():
    name = "race_tmem_dealloc_reader"
    rep = race(name)
    # every warp's load, including the deallocating warp's own: no register dependency orders a dealloc
    assert {f.kind for f in rep.findings} == {"data_race"}
    f = only(rep)
    assert f.message == ("unordered read/write on tmem tmem[0:32]:[0, 16260) ... completion ordering failure: "
                         "an asynchronous access is not completed before the conflicting reuse")
    d = f.details
    assert (d["access_pair"], d["ordering_domain"], d["ordering_failure"]) == \
        ("read_write", "completion", "async_lifetime_not_drained")
    assert "tcgen05.wait::ld" in d["hint"] and "before_thread_sync" in d["hint"]
    assert_points_at(d["prior"], name, f"{LD_X1}(reg[0], taddr)", op="tcgen05.ld", access="read")
    assert_points_at(d["current"], name, DEALLOC, warp=0, op="tcgen05.dealloc", access="write")
    assert race(name + "_fixed").verdict == "clean"


def test_alloc_address_store_reaches_its_own_warp_only():
    """PTX ISA 9.7.16.7.1: the allocating warp reads the slot right after tcgen05.alloc (the ISA's own
    example); another warp needs synchronization to see the weak store of the address."""
    name = "race_tmem_alloc_slot_unpublished"
    rep = race(name)
    f = only(rep)
    assert f.message == ("unordered write/read on smem slot:[0, 4) ... execution ordering failure: "
                         "no synchronization edge orders the actors")
    d = f.details
    assert_points_at(d["prior"], name, ALLOC, warp=0, lane=0, access="write")
    assert_points_at(d["current"], name, "out[tx] = slot[0] + x[tx]", warp=1, access="read")
    # lanes 1-31 of warp 0 read the slot without a warp_sync: not a race (this failed before the fix)
    fixed = race(name + "_fixed")
    assert fixed.verdict == "clean", fixed.format()


def test_cross_warpgroup_tmem_handoff_needs_after_thread_sync():
    name = "race_tcgen05_handoff_no_after_fence"
    rep = race(name)
    f = only(rep)
    assert f.message == ("unordered write/read on tmem tmem[0:32]:[0, 16260) ... completion ordering failure: "
                         "an asynchronous access is not completed before the conflicting reuse")
    d = f.details
    assert (d["access_pair"], d["ordering_failure"]) == ("write_read", "async_lifetime_not_drained")
    assert "after_thread_sync" in d["hint"]
    assert_points_at(d["prior"], name, f"{ST_X1}(taddr, reg[0])", op="tcgen05.st", access="write")
    assert_points_at(d["current"], name, f"{LD_X1}(reg[0], taddr)", op="tcgen05.ld", access="read")
    assert d["prior"]["warp"] < 4 <= d["current"]["warp"]
    assert d["current"]["warp"] % 4 == d["prior"]["warp"] % 4         # the same TMEM lane quarter
    assert d["current"]["lane"] == d["prior"]["lane"]                 # ... and the same TMEM lane: the witness cell
    assert race(name + "_fixed").verdict == "clean"


@pytest.mark.parametrize("name", ["gemm_ws", "mma_ts"])
def test_correct_tcgen05_kernels_are_clean(name):
    rep = race(name)
    assert rep.verdict == "clean", rep.format()
    assert rep.stats["lane_accesses"] > 0


@pytest.mark.parametrize("which,hint", [
    (2, "after_thread_sync"),         # the epilogue's fence after waiting for mma_done
    (3, "after_thread_sync"),         # warp 0's fence before tcgen05.dealloc
])
def test_gemm_ws_without_a_thread_sync_fence_races_on_tmem(which, hint):
    """gemm_ws is clean because of its fences: drop one and the TMEM accesses race."""
    lines = (KERNELS / "gemm_ws.py").read_text().splitlines()
    fences = [i for i, text in enumerate(lines) if text.strip() == "T.ptx.tcgen05.fence__after_thread_sync()"]
    lines[fences[which]] = lines[fences[which]].replace("T.ptx.tcgen05.fence__after_thread_sync()", "pass")
    rep = race("gemm_ws", "\n".join(lines))
    tmem = [f for f in rep.findings if f.kind == "data_race" and f.details["overlap"]["space"] == "tmem"]
    assert tmem, rep.format()
    assert all(hint in f.details["hint"] for f in tmem)
    assert {f.details["current"]["op"] for f in tmem} <= {"tcgen05.ld", "tcgen05.dealloc"}


def test_bulk_store_source_is_read_until_wait_group_read():
    """The store's source read is recorded at issue: the next round's overwrite is Current, the read Prior."""
    name = "race_bulk_store_source_reuse"
    rep = race(name)
    store = 'T.ptx["cp.async.bulk.global.shared::cta.bulk_group"]'
    overwrite = "stage[tx] = x[h * TILE + tx] * T.float32(2.0)"
    found = [f for f in rep.findings if f.details["access_pair"] == "read_write"]
    assert len(found) == 1, rep.format()
    d = found[0].details
    assert found[0].message.startswith("unordered read/write on smem stage:[0, ")
    assert d["ordering_failure"] == "missing_proxy_bridge"
    # the read was never observed complete: the hint asks for wait_group.read first
    assert d["proxy_bridge"]["async_completion_observed"] is False
    assert (d["proxy_bridge"]["prior_proxy"], d["proxy_bridge"]["current_proxy"]) == ("async", "generic")
    assert "wait_group.read" in d["hint"]
    assert_points_at(d["prior"], name, store, warp=0, lane=0, op="bulk.s2g", async_op=True, access="read")
    assert_points_at(d["current"], name, overwrite, access="write")
    assert (d["prior"]["iters"], d["current"]["iters"]) == ([0], [1])
    # every finding pairs the round-0 store with the round-1 overwrite (a warp that passed the barrier before
    # the issuing warp resumed wrote before the issue, so its pair runs the other way)
    for f in rep.findings:
        ops = {f.details["prior"]["span"].line, f.details["current"]["span"].line}
        assert ops == {line_of(name, store), line_of(name, overwrite)}
    assert race(name + "_fixed").verdict == "clean"


FIXTURES = KERNELS.parent / "tests" / "fixtures" / "racecheck"


@pytest.mark.parametrize("mode,verdict", [(0, "error"), (1, "clean"), (2, "error"), (3, "clean")])
def test_same_thread_cp_pair_is_ordered_by_a_before_fence_or_a_commit(mode, verdict):
    """Two tcgen05.cp of one thread into the same columns are not pipelined: a fence::before_thread_sync or a
    commit (which implies it) between them orders them; nothing, or only an after_thread_sync, does not."""
    func = modelcheck.load(FIXTURES / "tcgen_cp_pair.py", MODE=mode).func
    img = np.arange(2 * 512, dtype=np.uint32).reshape(2, 512) * 3 + 1
    rep = modelcheck.racecheck(func, inputs={"img": img, "out": np.zeros((128, 4), np.uint32)})
    assert rep.verdict == verdict, rep.format()
    if verdict == "error":
        f = only(rep)
        assert f.message.startswith("unordered write/write on tmem tmem[0:32]:[0, ")
        d = f.details
        assert (d["prior"]["op"], d["current"]["op"]) == ("tcgen05.cp", "tcgen05.cp")
        assert d["prior"]["span"].line < d["current"]["span"].line
        assert "before_thread_sync" in d["hint"]


@pytest.mark.parametrize("after_fence", [0, 1])
def test_relaxed_flag_hands_off_fenced_tcgen05_work(after_fence):
    """A morally strong (relaxed) flag is a thread sync for tcgen05 work fenced on both sides."""
    func = modelcheck.load(FIXTURES / "tcgen_flag_handoff.py", AFTER_FENCE=after_fence).func
    rep = modelcheck.racecheck(func, inputs={"x": np.arange(32, dtype=np.uint32), "out": np.zeros(32, np.uint32)})
    if after_fence:
        assert rep.verdict == "clean", rep.format()
        return
    f = only(rep)
    d = f.details
    assert (d["access_pair"], d["prior"]["op"], d["current"]["op"]) == ("write_read", "tcgen05.st", "tcgen05.ld")
    assert (d["prior"]["warp"], d["current"]["warp"]) == (0, 4)
    assert "after_thread_sync" in d["hint"]


@pytest.mark.parametrize("full", [0, 1, 2])
def test_wait_group_read_retires_only_the_source_reads(full):
    """After wait_group.read the bulk store's destination writes are still unordered with a reader; the groups stay
    pending, so a later wait_group without .read retires them (FULL = 2: two halves, each .read-waited, then one
    full wait)."""
    func = modelcheck.load(FIXTURES / "bulk_store_wait_read.py", FULL=full).func
    rep = modelcheck.racecheck(func, inputs={"x": np.arange(128, dtype=np.float32), "out": np.zeros(128, np.float32),
                                             "back": np.zeros(128, np.float32)})
    if full:
        assert rep.verdict == "clean", rep.format()
        return
    f = only(rep)
    assert f.message == ("unordered write/read on gmem out:[0, 512) ... completion ordering failure: "
                         "an asynchronous access is not completed before the conflicting reuse")
    d = f.details
    assert (d["prior"]["op"], d["prior"]["access"], d["current"]["access"]) == ("bulk.s2g", "write", "read")
    assert "wait_group (without .read)" in d["hint"]
    assert "proxy_bridge" not in d        # the copy's completion bridges its own destination


@pytest.mark.parametrize("relay", [0, 1])
def test_elected_wait_is_relayed_to_the_warp_by_warp_sync(relay):
    """Only lane 0 waits; a warp_sync passes what it received on (the fences are needed only at the chain's ends),
    without it lanes 1-31 issue their part of the warp-wide tcgen05.ld unordered with the stores."""
    func = modelcheck.load(FIXTURES / "tcgen_elected_wait_relay.py", RELAY=relay).func
    rep = modelcheck.racecheck(func, inputs={"x": np.arange(128, dtype=np.uint32), "out": np.zeros(128, np.uint32)})
    if relay:
        assert rep.verdict == "clean", rep.format()
        return
    f = only(rep)
    d = f.details
    assert (d["access_pair"], d["prior"]["op"], d["current"]["op"]) == ("write_read", "tcgen05.st", "tcgen05.ld")
    assert d["current"]["warp"] >= 4


@pytest.mark.parametrize("local_work", [0, 1])
def test_a_commit_republishes_only_through_its_own_tcgen05_work(local_work):
    """A commit tracks its thread's own mma/cp/shift and their predecessors; an empty commit of a thread that only
    observed another thread's copy publishes nothing, so readers waiting on it race with that copy."""
    func = modelcheck.load(FIXTURES / "tcgen_commit_relay.py", LOCAL_WORK=local_work).func
    img = np.arange(2 * 512, dtype=np.uint32).reshape(2, 512) * 3 + 1
    rep = modelcheck.racecheck(func, inputs={"img": img, "out": np.zeros((128, 4), np.uint32)})
    if local_work:
        assert rep.verdict == "clean", rep.format()
        return
    f = only(rep)
    d = f.details
    assert (d["access_pair"], d["prior"]["op"], d["current"]["op"]) == ("write_read", "tcgen05.cp", "tcgen05.ld")
    assert (d["prior"]["warp"], d["ordering_failure"]) == (0, "async_lifetime_not_drained")


@pytest.mark.parametrize("fence", [0, 1])
def test_a_commit_publishes_its_issuers_bridges(fence):
    """A proxy fence anywhere on the causality path bridges: warp 0's stores, its fence.proxy.async and arrive, the
    waiter's tcgen05.cp and commit, and the commit's waiter reloading the tile with a bulk copy (the KDA backward's
    stmatrix -> mma -> TMA refill of a stage).  The commit publishes what its issuer had bridged; without the fence
    the stores race with both async-proxy accesses."""
    func = modelcheck.load(FIXTURES / "tcgen_commit_bridge_relay.py", FENCE=fence).func
    words = np.arange(512, dtype=np.uint32)
    rep = modelcheck.racecheck(func, inputs={"img": words * 3 + 1, "fresh": words + 7, "out": np.zeros(512, np.uint32)})
    if fence:
        assert rep.verdict == "clean", rep.format()
        return
    assert rep.verdict == "error"
    got = sorted((f.details["current"]["op"], f.details["ordering_failure"]) for f in rep.findings)
    assert got == [("bulk.g2s", "missing_proxy_bridge"), ("tcgen05.cp", "missing_proxy_bridge")]
    assert {f.details["prior"]["op"] for f in rep.findings} == {"element store shared"}
