"""How NumSim binds inputs (numsim/engine.py, numsim/tensormap.py): a private copy of every buffer the kernel
may write, a read-only view of one it can only read (never stored to, its address never taken), so a large
read-only input costs no memory; a write the compiler did not foresee is reported, never made."""
from __future__ import annotations

from pathlib import Path

import numpy as np

import modelcheck
from modelcheck import numsim
from modelcheck.numsim import TensorMap, engine
from modelcheck.numsim.memory import GlobalMemory
from modelcheck.numsim.tensormap import bind_tensor_maps, buffers_under
from tests.manifest import KERNELS

FIX = Path(__file__).parent.parent.parent / "fixtures" / "numsim"


def inputs():
    return {"x": np.arange(64, dtype=np.int32), "out": np.zeros(64, np.int32), "flag": np.zeros(1, np.int32)}


def test_a_buffer_the_kernel_only_reads_is_bound_without_a_copy():
    func = modelcheck.load(FIX / "read_only_input.py").func
    given = inputs()
    res = numsim.run(func, given)
    assert res.verdict == "clean", res.diagnostics
    np.testing.assert_array_equal(res.outputs["out"], np.arange(64) * 2 + 1)
    assert np.shares_memory(res.outputs["x"], given["x"]) and not res.outputs["x"].flags.writeable
    for written in ("out", "flag"):               # stored to, or its address taken: private copies
        assert not np.shares_memory(res.outputs[written], given[written])
    assert res.outputs["flag"][0] == 1 and given["flag"][0] == 0
    assert given["x"].flags.writeable             # the caller's array itself is untouched


def test_an_all_zero_output_gets_fresh_zeros_not_a_copy():
    func = modelcheck.load(FIX / "read_only_input.py").func
    given = inputs()
    given["flag"] = np.array([-0.0], np.float32).view(np.int32)     # -0.0's bytes are not zero: copied
    res = numsim.run(func, given)
    assert res.outputs["out"].flags.writeable and not np.shares_memory(res.outputs["out"], given["out"])
    np.testing.assert_array_equal(res.outputs["out"], np.arange(64) * 2 + 1)
    assert res.outputs["flag"][0] == 1 and given["flag"][0] == np.array([-0.0], np.float32).view(np.int32)[0]
    assert numsim.inputs.all_zero(np.zeros(4, np.float32)) and not numsim.inputs.all_zero(given["flag"])


def test_a_write_the_compiler_did_not_foresee_is_reported_not_made(monkeypatch):
    compile_ = engine.Compiler.compile

    def forgetful(self):
        program = compile_(self)
        program.written_globals.clear()           # as if the compiler had missed every write
        return program
    monkeypatch.setattr(engine.Compiler, "compile", forgetful)
    given = inputs()
    res = numsim.run(modelcheck.load(FIX / "read_only_input.py").func, given)
    assert res.termination == "incomplete"
    (diag,) = res.diagnostics_of("analysis_incomplete")
    assert diag.details["reason"] == "internal" and "read-only" in diag.message
    assert not given["out"].any()


def test_tensor_map_bytes_are_copied_only_when_the_kernel_stores_through_a_map():
    func = modelcheck.load(KERNELS / "tma_copy_64b.py").func
    src = np.arange(64 * 64, dtype=np.float32)
    tmap = TensorMap(src, (64, 64), (256,), (16, 8), (1, 1), "float32", "64B").numpy()
    for written, copied in ((set(), False), ({"other_map"}, False), ({"tmap"}, True), (True, True)):
        gmem = GlobalMemory()
        (bound,) = bind_tensor_maps(func, {"tmap": tmap}, gmem, written=written).values()
        assert bound.alloc.data.flags.writeable == copied
        assert np.shares_memory(bound.alloc.data, tmap) != copied


def test_a_buffer_a_stored_through_map_points_into_gets_a_copy():
    func = modelcheck.load(KERNELS / "tma_copy_64b.py").func
    src = np.arange(64 * 64, dtype=np.float32)
    live = TensorMap(src, (64, 64), (256,), (16, 8), (1, 1), "float32", "64B")
    inputs = {"src": src, "tmap": live.numpy(), "out": np.zeros(128, np.float32)}
    assert buffers_under(func, inputs, {"tmap"}) == {"src"}
    assert buffers_under(func, inputs, set()) == set()
    inputs["tmap"] = np.array(live.numpy())          # a plain copy of the descriptor: bytes of its own
    assert buffers_under(func, inputs, {"tmap"}) == set()


def test_a_stored_through_map_copies_only_its_nonzero_bytes():
    """A map some operation stores through gets a private copy of its payload, made in fresh zeroed memory with
    only the nonzero chunks copied (memory.sparse_copy): a large, mostly zero output tensor costs its nonzero
    part (the corpus's masked grouped GEMM: a 1.5 GB output holding one nonzero page)."""
    from modelcheck.numsim import budget
    func = modelcheck.load(KERNELS / "tma_copy_64b.py").func
    src = np.zeros(64 * 64, dtype=np.float32)
    src[5], src[-1] = 1.5, -2.0
    tmap = TensorMap(src, (64, 64), (256,), (16, 8), (1, 1), "float32", "64B").numpy()
    (bound,) = bind_tensor_maps(func, {"tmap": tmap}, GlobalMemory(), written=True).values()
    payload = bound.alloc.data[bound.base_off:]
    assert bound.alloc.data.flags.writeable and not np.shares_memory(bound.alloc.data, tmap)
    assert np.array_equal(payload.view(np.float32)[:src.size], src)
    # 256 MB with one nonzero chunk in the middle: the copy is not resident beyond a few pages
    big = np.zeros(256 << 20, dtype=np.uint8)
    big[(128 << 20) + 7] = 9
    from modelcheck.numsim.memory import sparse_copy
    before = budget.resident_bytes()
    out = sparse_copy(big, pad=3)
    assert budget.resident_bytes() - before < (16 << 20)
    assert out.size == big.size + 3 and out[(128 << 20) + 10] == 9 and out[:3].sum() == 0
    assert np.count_nonzero(out) == 1


def test_a_buffer_read_only_through_host_encoded_maps_is_bound_without_a_copy():
    """kda_fwd's host prelude encodes maps over q, k, v and o; the kernel only loads through q's, k's and v's and
    stores through o's (tmap_o): q, k and v are bound as they are, o gets a private copy.  (Every host-encoded
    buffer used to be copied: the corpus's FlashMLA prefill copied its 512 MB q.)"""
    kernel = modelcheck.load(KERNELS / "kda_fwd.py")
    given = numsim.default_inputs(kernel.func, {name: "ones" for name in ("q", "k", "v", "o")})
    res = numsim.run(kernel.func, given)
    assert res.termination == "completed", res.diagnostics
    for name in ("q", "k", "v"):
        assert np.shares_memory(res.outputs[name], given[name]) and not res.outputs[name].flags.writeable, name
    assert not np.shares_memory(res.outputs["o"], given["o"]) and res.outputs["o"].flags.writeable
    assert given["o"].view(np.uint16).tolist() == np.ones_like(given["o"]).view(np.uint16).tolist()
