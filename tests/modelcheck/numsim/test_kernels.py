"""NumSim runs the corpus kernels (kernels/) and agrees with independent numpy references.

Integers are compared exactly; float32 results are compared exactly against numpy
computing the same float32 operations (both round every operation to float32).
Inputs are never mutated and outputs are copies.  The failure kernels report a
deadlock naming the blocked warps with the barrier and phase they await, and an
oob naming the faulting lane and address (masked-off lanes never fault).
"""
from __future__ import annotations

import numpy as np
import pytest

import modelcheck
from modelcheck import numsim
from modelcheck.numsim.memory import GLOBAL_BASE, GLOBAL_STRIDE
from tests.manifest import KERNELS


def load(name: str, **consts):
    return modelcheck.load(KERNELS / f"{name}.py", **consts)


def line_of(name: str, snippet: str) -> int:
    """1-based line of the only line of kernels/<name>.py containing `snippet`."""
    lines = [k + 1 for k, text in enumerate((KERNELS / f"{name}.py").read_text().splitlines()) if snippet in text]
    assert len(lines) == 1, (snippet, lines)
    return lines[0]


def run_checked(func, inputs: dict, **kw):
    """Run, and check that the inputs were not mutated and the outputs are private copies (or, for a buffer the
    kernel only reads, a read-only view of its unchanged input)."""
    before = {k: v.copy() for k, v in inputs.items() if isinstance(v, np.ndarray)}
    result = numsim.run(func, inputs, **kw)
    for k, v in before.items():
        np.testing.assert_array_equal(inputs[k], v, err_msg=f"input {k} was mutated")
        assert inputs[k].dtype == v.dtype
    for k, out in result.outputs.items():
        assert not np.shares_memory(out, inputs[k]) or not out.flags.writeable, f"output {k} aliases its input"
        assert out.shape == inputs[k].shape and out.dtype == inputs[k].dtype
    return result


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


# --------------------------------------------------------------------------- vector_add

def test_vector_add_matches_numpy_and_masks_the_tail():
    k = load("vector_add")
    n = k.constants["N"]
    a = rng(1).standard_normal(n).astype(np.float32)
    b = rng(2).standard_normal(n).astype(np.float32)
    c = np.full(n, 7.0, np.float32)
    res = run_checked(k.func, {"a": a, "b": b, "c": c})
    assert res.verdict == "clean" and res.termination == "completed"
    np.testing.assert_array_equal(res.outputs["c"], a + b)
    assert res.stats["ctas"] == 8 and res.stats["warps"] == 32


def test_vector_add_outputs_are_copies_and_selectable():
    k = load("vector_add")
    n = k.constants["N"]
    a, b, c = np.ones(n, np.float32), np.full(n, 2.0, np.float32), np.zeros(n, np.float32)
    res = numsim.run(k.func, {"a": a, "b": b, "c": c}, outputs=("c",))
    assert list(res.outputs) == ["c"]
    res.outputs["c"][:] = -1          # a private, writable copy
    np.testing.assert_array_equal(c, 0)
    again = numsim.run(k.func, {"a": a, "b": b, "c": c}, outputs=("c",))
    np.testing.assert_array_equal(again.outputs["c"], 3.0)
    with pytest.raises(ValueError, match="not a buffer parameter"):
        numsim.run(k.func, {"a": a, "b": b, "c": c}, outputs=("d",))


# --------------------------------------------------------------------------- smem_reduce

def test_smem_reduce_block_sums():
    k = load("smem_reduce")
    n, ctas = k.constants["N"], k.constants["CTAS"]
    x = rng(3).integers(-10**6, 10**6, ctas * n).astype(np.int32)
    out = np.zeros(ctas, np.int32)
    res = run_checked(k.func, {"x": x, "out": out})
    assert res.verdict == "clean"
    np.testing.assert_array_equal(res.outputs["out"], x.reshape(ctas, n).sum(axis=1, dtype=np.int64).astype(np.int32))


def test_smem_reduce_wraps_int32():
    k = load("smem_reduce")
    n, ctas = k.constants["N"], k.constants["CTAS"]
    x = np.full(ctas * n, 2**30 + 3, np.int32)          # the block sum overflows int32
    res = run_checked(k.func, {"x": x, "out": np.zeros(ctas, np.int32)})
    want = np.int32(((2**30 + 3) * n + 2**31) % 2**32 - 2**31)
    np.testing.assert_array_equal(res.outputs["out"], np.full(ctas, want, np.int32))


def test_smem_reduce_uses_named_barrier_generations():
    k = load("smem_reduce")
    n, ctas = k.constants["N"], k.constants["CTAS"]
    trace = numsim.Trace()
    numsim.run(k.func, {"x": np.ones(ctas * n, np.int32), "out": np.zeros(ctas, np.int32)}, observers=[trace])
    syncs = [e for e in trace.sync if e.kind == "bar.sync"]
    steps = 1 + (n // 2).bit_length()          # the load barrier, then one per halving step
    for cta in range(ctas):
        gens = sorted({e.generation for e in syncs if e.cta == cta})
        assert gens == list(range(steps))
        per_gen = [sum(1 for e in syncs if e.cta == cta and e.generation == g) for g in gens]
        assert per_gen == [n // 32] * steps             # every warp contributes to every generation
        assert all(e.barrier == ("named", cta, 1) and e.count == n for e in syncs if e.cta == cta)


# --------------------------------------------------------------------------- bulk_ring

def test_bulk_ring_matches_numpy():
    k = load("bulk_ring")
    rounds, tile = k.constants["ROUNDS"], k.constants["TILE"]
    src = rng(4).standard_normal(rounds * tile).astype(np.float32)
    bias = rng(5).standard_normal(tile).astype(np.float32)
    res = run_checked(k.func, {"src": src, "bias": bias, "out": np.zeros(rounds * tile, np.float32)})
    assert res.verdict == "clean" and res.termination == "completed"
    want = (src.reshape(rounds, tile) * np.float32(2.5) + bias).reshape(-1)
    np.testing.assert_array_equal(res.outputs["out"], want)
    assert res.stats["async_ops"] == rounds


def test_bulk_ring_consumers_observe_each_generation_once():
    k = load("bulk_ring")
    rounds, tile, stages = k.constants["ROUNDS"], k.constants["TILE"], k.constants["STAGES"]
    trace = numsim.Trace()
    res = numsim.run(k.func, numsim.default_inputs(k.func, {"src": "random:4", "bias": "random:5"}),
                     observers=[trace])
    assert res.verdict == "clean"
    names = {}
    for e in trace.sync:
        if e.kind == "mbarrier.init":
            names[e.barrier[2]] = res.sites[e.site].text.split("(")[1].split(".")[0]   # full / empty
    waits = [e for e in trace.sync if e.kind == "mbarrier.wait"]
    for warp in (1, 2):
        mine = [e for e in waits if e.warp == warp]
        assert [names[e.barrier[2]] for e in mine] == ["full"] * rounds
        assert [e.iters for e in mine] == [(r,) for r in range(rounds)]
        assert [e.generation for e in mine] == [r // stages for r in range(rounds)]
        assert [e.parity for e in mine] == [(r // stages) % 2 for r in range(rounds)]
    producer = [e for e in waits if e.warp == 0]
    # the first pass over each stage is the vacuous parity-1 wait after init (no generation observed)
    assert [e.generation for e in producer] == [None, None] + [r // stages - 1 for r in range(stages, rounds)]
    completes = [e for e in trace.sync if e.kind == "mbarrier.complete_tx"]
    assert len(completes) == rounds and all(e.tx == tile * 4 and e.completed for e in completes)
    # the data moved by the async unit: bulk reads of src and writes of buf, with the async proxy
    bulk = [a for a in trace.accesses if a.proxy == "async"]
    assert sorted({(a.alloc_name, a.kind) for a in bulk}) == [("buf", "write"), ("src", "read")]
    assert all(a.size == tile * 4 for a in bulk)


# --------------------------------------------------------------------------- warp_scan

def test_warp_scan_both_spellings_match_cumsum_with_wraparound():
    k = load("warp_scan")
    n = k.constants["N"]
    x = rng(6).integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)      # sums wrap mod 2**32
    y = rng(7).integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32)   # sums overflow int32
    res = run_checked(k.func, {"x": x, "y": y, "out_ptx": np.zeros(n, np.uint32), "out_cuda": np.zeros(n, np.int32)})
    assert res.verdict == "clean"
    want_x = np.cumsum(x.reshape(-1, 32), axis=1, dtype=np.uint32).reshape(-1)
    want_y = np.cumsum(y.reshape(-1, 32).astype(np.int64), axis=1)
    want_y = ((want_y + 2**31) % 2**32 - 2**31).astype(np.int32).reshape(-1)
    np.testing.assert_array_equal(res.outputs["out_ptx"], want_x)
    np.testing.assert_array_equal(res.outputs["out_cuda"], want_y)


# --------------------------------------------------------------------------- atomic_histogram

def test_atomic_histogram_counts_accumulate_into_the_output():
    k = load("atomic_histogram")
    n, bins = k.constants["N"], k.constants["BINS"]
    x = rng(8).integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    hist = np.arange(bins, dtype=np.uint32) * 1000         # atomics add to what is there
    total = np.array([5], np.uint32)
    res = run_checked(k.func, {"x": x, "hist": hist, "total": total})
    assert res.verdict == "clean"
    np.testing.assert_array_equal(res.outputs["hist"], hist + np.bincount(x % bins, minlength=bins).astype(np.uint32))
    np.testing.assert_array_equal(res.outputs["total"], [5 + n])


def test_atomic_histogram_skewed_input_serializes_conflicting_lanes():
    # every element lands in bin 3: 32 lanes of a warp hit one address in one instruction
    k = load("atomic_histogram")
    n, bins = k.constants["N"], k.constants["BINS"]
    x = np.full(n, 3 + 7 * bins, np.uint32)
    res = run_checked(k.func, {"x": x, "hist": np.zeros(bins, np.uint32), "total": np.zeros(1, np.uint32)})
    want = np.zeros(bins, np.uint32)
    want[3] = n
    np.testing.assert_array_equal(res.outputs["hist"], want)


# --------------------------------------------------------------------------- hang_wrong_parity

def test_hang_wrong_parity_deadlock_names_blocked_warps_barrier_and_phase():
    k = load("hang_wrong_parity")
    inputs = numsim.default_inputs(k.func)
    res = run_checked(k.func, inputs)
    assert res.verdict == "error" and res.termination == "error"
    [d] = res.diagnostics_of("deadlock")
    assert d.status == "error"
    assert "blocked warps 0-1" in d.message
    assert "warps 0: await mbarrier.try_wait on empty[0]; phase 1" in d.message
    assert "warps 1: await mbarrier.try_wait on full[0]; phase 0" in d.message
    blocked = {b["warp"]: b for b in d.details["blocked"]}
    assert sorted(blocked) == [0, 1]
    assert blocked[0]["awaits"] == "await mbarrier.try_wait on empty[0]; phase 1"
    assert blocked[1]["awaits"] == "await mbarrier.try_wait on full[0]; phase 0"
    assert blocked[0]["cta"] == blocked[1]["cta"] == 0
    # the producer is stuck in round 0, the consumer in round 1 (its round 0 passed vacuously)
    assert blocked[0]["iters"] == [0] and blocked[1]["iters"] == [1]
    # the diagnostic points at a blocked wait, and is about no single running warp
    assert "warp" not in d.details
    assert d.span is not None and d.span.line in (
        line_of("hang_wrong_parity", "mbarrier_wait(empty"), line_of("hang_wrong_parity", "mbarrier_wait(full"))
    # the consumer read the slot before anything was written: an advisory, besides the error
    [u] = res.diagnostics_of("uninitialized_read")
    assert u.status == "review" and u.details["allocation"] == "slot"


def test_hang_wrong_parity_fixed_delivers_every_round():
    k = load("hang_wrong_parity_fixed")
    rounds, consumers = k.constants["ROUNDS"], k.constants["CONSUMERS"]
    res = run_checked(k.func, numsim.default_inputs(k.func))
    assert res.verdict == "clean"
    want = np.tile(np.arange(rounds, dtype=np.int32) * 10 + 7, (consumers, 1))
    np.testing.assert_array_equal(res.outputs["out"], want)


def test_hang_fixed_with_more_consumers():
    k = load("hang_wrong_parity_fixed", CONSUMERS=3, ROUNDS=6)
    res = run_checked(k.func, numsim.default_inputs(k.func))
    assert res.verdict == "clean"
    np.testing.assert_array_equal(res.outputs["out"], np.tile(np.arange(6, dtype=np.int32) * 10 + 7, (3, 1)))


# --------------------------------------------------------------------------- oob_store

def test_oob_store_reports_lane_and_address():
    k = load("oob_store")
    n, threads = k.constants["N"], k.constants["THREADS"]
    x = rng(9).integers(-1000, 1000, n).astype(np.int32)
    res = run_checked(k.func, {"x": x, "out": np.zeros(n, np.int32)})
    assert res.verdict == "error" and res.termination == "error"
    [d] = res.diagnostics
    assert d.kind == "oob" and d.status == "error"
    # thread i = N - 1 = 99 is CTA 1, thread 35: warp 1 of CTA 1 (global warp 3), lane 3
    i = n - 1
    cta, tid = divmod(i, threads)
    out_slot = 1                                   # `out` is the second buffer parameter
    address = GLOBAL_BASE + out_slot * GLOBAL_STRIDE + (i + 1) * 4
    assert d.details["lane"] == tid % 32 == 3
    assert d.details["address"] == address
    assert d.details["buffer"] == "out" and d.details["index"] == n
    assert d.details["cta"] == cta and d.details["warp"] == cta * (threads // 32) + tid // 32
    assert "write" in d.message and f"lane 3 at address {address:#x}" in d.message
    assert d.span.line == line_of("oob_store", "out[i + 1] = v")
    # the lanes with i >= N (masked off by the guard) never faulted on their x[i] loads,
    # and the stores before the fault landed
    np.testing.assert_array_equal(res.outputs["out"][1:threads + 1], x[:threads] * 3)


def test_oob_store_fixed_matches_numpy():
    k = load("oob_store_fixed")
    n = k.constants["N"]
    x = rng(9).integers(-1000, 1000, n).astype(np.int32)
    res = run_checked(k.func, {"x": x, "out": np.zeros(n, np.int32)})
    assert res.verdict == "clean"
    np.testing.assert_array_equal(res.outputs["out"], np.concatenate([[-1], x[:-1] * 3]).astype(np.int32))


# --------------------------------------------------------------------------- producer_overtaking

def test_producer_overtaking_fixed_hands_over_every_round():
    k = load("producer_overtaking_fixed")
    res = run_checked(k.func, {"out": np.zeros(4, np.int32)})
    assert res.verdict == "clean"
    np.testing.assert_array_equal(res.outputs["out"], [7, 17, 27, 37])


def test_producer_overtaking_deadlocks_under_numsim_schedule():
    k = load("producer_overtaking")
    res = run_checked(k.func, {"out": np.zeros(4, np.int32)})
    [d] = res.diagnostics_of("deadlock")
    assert [b["warp"] for b in d.details["blocked"]] == [1]
    assert d.details["blocked"][0]["awaits"] == "await mbarrier.try_wait on full[0]; phase 0"
    # the producer ran all four rounds before the consumer's first wait was re-checked: generation 3
    # (parity 1) is the latest, so the consumer's round-0 wait for parity 0 can never pass
    assert d.details["blocked"][0]["iters"] == [0]
