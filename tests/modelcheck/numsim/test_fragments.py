"""Warp-collective fragment ops in NumSim: ldmatrix, stmatrix, movmatrix, mma.sync, redux.sync.

The expected values come from lane/fragment maps written here, lane by lane, from the PTX ISA tables
(9.7.14.5.15-17 for the m8n8 matrices, 9.7.14.5.8-9 for the mma.sync m16n8k8/m16n8k16 fragments,
9.7.12.13 for redux.sync), never from the simulator's own maps.
"""
from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import ir
import modelcheck
from modelcheck import numsim
from modelcheck.numsim.errors import UnsupportedTIRxError

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "numsim"
KERNELS = Path(__file__).resolve().parents[3] / "kernels"


def _run(name: str, inputs: dict, **consts):
    kernel = modelcheck.load(FIXTURES / f"{name}.py", **consts)
    return numsim.run(kernel.func, numsim.default_inputs(kernel.func, inputs))


# --------------------------------------------------------------------------- m8n8 matrices

def _matrix_rows(src, rows, i):
    """Matrix i of an ldmatrix/stmatrix: its row r lives at the address lane 8*i + r supplies."""
    return [int(rows[8 * i + r]) for r in range(8)]


def _element_of(lane, half, trans):
    """(row, col) of the m8n8 element in `half` (0 low, 1 high) of `lane`'s register."""
    group, tid = lane // 4, lane % 4
    return (2 * tid + half, group) if trans else (group, 2 * tid + half)


def ref_ldmatrix(src, rows, count, trans):
    out = np.zeros((32, count), np.uint32)
    for lane in range(32):
        for i in range(count):
            mat_rows = _matrix_rows(src, rows, i)
            word = 0
            for half in (0, 1):
                r, c = _element_of(lane, half, trans)
                word |= int(src[mat_rows[r], c]) << (16 * half)
            out[lane, i] = word
    return out


def ref_stmatrix(regs, rows, count, trans, nrows):
    out = np.zeros((nrows, 8), np.uint16)
    for lane in range(32):
        for i in range(count):
            mat_rows = _matrix_rows(None, rows, i)
            for half in (0, 1):
                r, c = _element_of(lane, half, trans)
                out[mat_rows[r], c] = (int(regs[lane, i]) >> (16 * half)) & 0xFFFF
    return out


@pytest.fixture(scope="module")
def movement():
    rng = np.random.default_rng(7)
    src = rng.integers(0, 1 << 16, (32, 8), dtype=np.uint32).astype(np.uint16)
    rows4 = rng.permutation(32).astype(np.int32)
    rows2 = np.concatenate([rng.permutation(16), np.full(16, 10**6)]).astype(np.int32)   # lanes 16-31 unused
    rows1 = np.concatenate([rng.permutation(8), np.full(24, -10**6)]).astype(np.int32)    # lanes 8-31 unused
    regs = rng.integers(0, 1 << 32, (32, 4), dtype=np.uint64).astype(np.uint32)
    inputs = {"src": src, "rows4": rows4, "rows2": rows2, "rows1": rows1, "regs": regs}
    res = _run("fragments_movement", inputs)
    assert res.verdict == "clean", res.diagnostics
    return inputs, res.outputs


@pytest.mark.parametrize("out, count, trans", [("ld_x4", 4, False), ("ld_x4t", 4, True), ("ld_x2", 2, False),
                                                ("ld_x2t", 2, True), ("ld_x1", 1, False), ("ld_x1t", 1, True)])
def test_ldmatrix_fragments(movement, out, count, trans):
    inputs, outputs = movement
    rows = {4: inputs["rows4"], 2: inputs["rows2"], 1: inputs["rows1"]}[count]
    want = ref_ldmatrix(inputs["src"], rows, count, trans)
    np.testing.assert_array_equal(outputs[out].reshape(32, count), want)


@pytest.mark.parametrize("out, count, trans, nrows", [("st_x4", 4, False, 32), ("st_x4t", 4, True, 32),
                                                       ("st_x2t", 2, True, 16), ("st_x1", 1, False, 8)])
def test_stmatrix_fragments(movement, out, count, trans, nrows):
    inputs, outputs = movement
    rows = {4: inputs["rows4"], 2: inputs["rows2"], 1: inputs["rows1"]}[count]
    want = ref_stmatrix(inputs["regs"], rows, count, trans, nrows)
    np.testing.assert_array_equal(outputs[out], want)


def test_movmatrix_transposes_the_fragment(movement):
    inputs, outputs = movement
    regs = inputs["regs"][:, 0]
    mat = np.zeros((8, 8), np.uint32)            # the matrix the registers hold, in the non-transposed map
    for lane in range(32):
        for half in (0, 1):
            mat[_element_of(lane, half, False)] = (int(regs[lane]) >> (16 * half)) & 0xFFFF
    want = np.zeros(32, np.uint32)
    for lane in range(32):
        for half in (0, 1):
            r, c = _element_of(lane, half, False)
            want[lane] |= np.uint32(mat[c, r] << (16 * half))      # element (r, c) of the transpose
    np.testing.assert_array_equal(outputs["mov"], want)


def test_fragment_ops_under_a_divergent_branch_are_divergence():
    res = _run("fragments_movement", {}, LIMIT=16)
    assert res.verdict == "error"
    assert [d.kind for d in res.diagnostics] == ["warp_collective_divergence"]


def test_misaligned_row_address_is_an_error():
    res = _run("fragments_movement", {}, COL=1)         # rows are 16-byte aligned; a 2-byte offset is not
    assert [d.kind for d in res.diagnostics] == ["misaligned_address"]


# --------------------------------------------------------------------------- mma.sync


def _pack_halves(lo, hi, np_t):
    lo16 = np.asarray(lo, dtype=np_t).view(np.uint16).astype(np.uint32)
    hi16 = np.asarray(hi, dtype=np_t).view(np.uint16).astype(np.uint32)
    return lo16 | (hi16 << 16)


def mma_fragments(a_mat, b_mat, c_mat, k, np_t):
    """Registers per lane from the PTX fragment tables: A (16 x k, row), B (k x 8, col), C (16 x 8)."""
    a = np.zeros((32, 4), np.uint32)
    b = np.zeros((32, 2), np.uint32)
    c = np.zeros((32, 4), np.float32)
    for lane in range(32):
        group, tid = lane // 4, lane % 4
        # A element a_i: row groupID (+8 for i in {2,3,6,7}), col 2*tid + (i & 1) (+8 for i >= 4)
        elems = []
        for i in range(k // 2):
            row = group + (8 if i % 4 >= 2 else 0)
            col = 2 * tid + (i & 1) + (8 if i >= 4 else 0)
            elems.append(a_mat[row, col])
        for j in range(k // 4):
            a[lane, j] = _pack_halves(elems[2 * j], elems[2 * j + 1], np_t)
        # B element b_i: row 2*tid + (i & 1) (+8 for i >= 2), col groupID
        elems = [b_mat[2 * tid + (i & 1) + (8 if i >= 2 else 0), group] for i in range(k // 4)]
        for j in range(k // 8):
            b[lane, j] = _pack_halves(elems[2 * j], elems[2 * j + 1], np_t)
        # C element c_i: row groupID (+8 for i >= 2), col 2*tid + (i & 1)
        for i in range(4):
            c[lane, i] = c_mat[group + (8 if i >= 2 else 0), 2 * tid + (i & 1)]
    return a, b, c


def unpack_d(d):
    out = np.zeros((16, 8), np.float32)
    for lane in range(32):
        for i in range(4):
            out[lane // 4 + (8 if i >= 2 else 0), 2 * (lane % 4) + (i & 1)] = d[lane, i]
    return out


@pytest.mark.parametrize("out, k, np_t", [("d_f16_k16", 16, np.float16), ("d_bf16_k16", 16, ml_dtypes.bfloat16),
                                          ("d_f16_k8", 8, np.float16), ("d_bf16_k8", 8, ml_dtypes.bfloat16)])
def test_mma_sync_equals_numpy(out, k, np_t):
    rng = np.random.default_rng(11)
    a_mat = rng.standard_normal((16, 16)).astype(np_t)
    b_mat = rng.standard_normal((16, 8)).astype(np_t)
    c_mat = rng.standard_normal((16, 8)).astype(np.float32)
    a, b, c = mma_fragments(a_mat, b_mat, c_mat, k, np_t)
    if k == 8:      # the k8 product reads registers a0, a1, b0 only
        a[:, 2:] = 0xDEADBEEF
        b[:, 1] = 0xDEADBEEF
    res = _run("fragments_mma", {"a": a, "b": b, "c": c})
    assert res.verdict == "clean", res.diagnostics
    want = a_mat[:, :k].astype(np.float32) @ b_mat[:k].astype(np.float32) + c_mat
    np.testing.assert_allclose(unpack_d(res.outputs[out]), want, rtol=1e-6, atol=1e-6)


def test_mma_sync_with_integer_inputs_is_exact():
    a_mat = (np.arange(256).reshape(16, 16) % 7 - 3).astype(np.float16)
    b_mat = (np.arange(128).reshape(16, 8) % 5 - 2).astype(np.float16)
    c_mat = np.full((16, 8), 0.5, np.float32)
    a, b, c = mma_fragments(a_mat, b_mat, c_mat, 16, np.float16)
    res = _run("fragments_mma", {"a": a, "b": b, "c": c})
    want = a_mat.astype(np.float32) @ b_mat.astype(np.float32) + c_mat
    np.testing.assert_array_equal(unpack_d(res.outputs["d_f16_k16"]), want)


# --------------------------------------------------------------------------- redux.sync

CANONICAL_NAN = 0x7FFFFFFF


def _f32_bits(x):
    return int(np.float32(x).view(np.uint32))


def test_redux_f32_nan_abs_and_signed_zero():
    xf = np.linspace(-3, 2, 32).astype(np.float32)
    xf[5] = np.nan
    xf[9] = -7.5
    res = _run("fragments_redux", {"xf": xf, "xi": np.arange(32, dtype=np.int32)})
    out = res.outputs["out_f"]
    finite = xf[~np.isnan(xf)]
    assert (out[:, 0] == finite.max()).all()                            # NaN ignored without .NaN
    assert all(_f32_bits(v) == CANONICAL_NAN for v in out[:, 1])        # .NaN: any NaN gives canonical NaN
    assert (out[:, 2] == np.abs(finite).min()).all()                    # .abs before the reduction
    assert (out[:, 3] == -7.5).all()


def test_redux_f32_zero_ordering_and_all_nan():
    xf = np.full(32, np.nan, np.float32)
    res = _run("fragments_redux", {"xf": xf})
    assert all(_f32_bits(v) == CANONICAL_NAN for v in res.outputs["out_f"][:, 0])   # all NaN: canonical NaN
    xf = np.where(np.arange(32) % 2 == 0, np.float32(-0.0), np.float32(0.0)).astype(np.float32)
    out = _run("fragments_redux", {"xf": xf}).outputs["out_f"]
    assert not np.signbit(out[:, 0]).any()          # max: +0.0 > -0.0
    assert np.signbit(out[:, 3]).all()              # min: -0.0


def test_redux_integer_and_bitwise_forms():
    rng = np.random.default_rng(3)
    xi = rng.integers(-2**31, 2**31, 32, dtype=np.int64).astype(np.int32)
    out = _run("fragments_redux", {"xi": xi}).outputs["out_i"]
    u = xi.view(np.uint32)
    assert (out[:, 0].view(np.uint32) == np.uint32(int(u.astype(np.uint64).sum()) & 0xFFFFFFFF)).all()
    assert (out[:, 1] == xi.min()).all()
    assert (out[:, 2].view(np.uint32) == u.max()).all()
    assert (out[:, 3].view(np.uint32) == np.bitwise_xor.reduce(u)).all()
    assert (out[:, 4].view(np.uint32) == np.bitwise_and.reduce(u)).all()
    # the partial member mask: lanes 0-15 reduce among themselves (the sum wraps), the others do not execute it
    wrapped = np.array(int(xi[:16].astype(np.int64).sum()) & 0xFFFFFFFF, np.uint32).view(np.int32)
    assert (out[:16, 5] == wrapped).all()
    assert (out[16:, 5] == 0).all()


def test_redux_by_a_lane_outside_its_member_mask_is_an_error():
    res = _run("fragments_redux", {}, MEMBERS=32)
    assert [d.kind for d in res.diagnostics] == ["warp_collective_divergence"]
    assert "outside its member mask" in res.diagnostics[0].message


def test_redux_with_a_member_lane_missing_is_divergence():
    res = _run("fragments_redux", {}, MEMBERS=8)
    assert [d.kind for d in res.diagnostics] == ["warp_collective_divergence"]


# --------------------------------------------------------------------------- classification

@pytest.mark.parametrize("op, n", [
    ("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16", 5), ("stmatrix.sync.aligned.m8n8.x2.shared::cta.b16", 3),
    ("ldmatrix.sync.aligned.m8n8.x1.b16", 2), ("movmatrix.sync.aligned.m8n8.trans.b16", 2),
    ("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", 14), ("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32", 11),
    ("redux_sync.max.abs.NaN.f32", 3), ("redux_sync.or.b32", 3)])
def test_modeled_forms_are_supported(op, n):
    info = ir.classify(op, ("uint32",) * n)
    assert info.supported, info.why_unsupported


@pytest.mark.parametrize("op, n, why", [
    ("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32", 16, "m16n8k8/.m16n8k16"),
    ("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", 16, "f16 or bf16"),
    ("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16", 10, "f32 accumulators"),
    ("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", 12, "f16 or bf16"),
    ("ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8", 2, ".m8n8 .b16"),
    ("stmatrix.sync.aligned.m16n8.x1.trans.shared.b8", 2, ".m8n8 .b16"),
    ("redux_sync.add.f32", 3, "redux.sync form"), ("redux_sync.max.abs.s32", 3, "redux.sync form")])
def test_other_forms_stay_unsupported_with_the_reason(op, n, why):
    info = ir.classify(op, ("uint32",) * n)
    assert not info.supported and why in info.why_unsupported


def test_an_unmodeled_mma_type_is_incomplete_at_its_line():
    kernel = modelcheck.load(FIXTURES / "fragments_mma.py", K8_TF32=1)
    with pytest.raises(UnsupportedTIRxError, match="mma.sync is modeled for") as err:
        numsim.run(kernel.func, numsim.default_inputs(kernel.func, {}))
    assert "tf32" in str(err.value) and "fragments_mma.py" in str(err.value)


def test_real_kernel_matches_numpy():
    kernel = modelcheck.load(KERNELS / "real" / "ldmatrix_mma_pre.py")
    rng = np.random.default_rng(1)
    a = rng.standard_normal((16, 16)).astype(np.float16)
    b = rng.standard_normal((16, 8)).astype(np.float16)
    res = numsim.run(kernel.func, numsim.default_inputs(kernel.func, {"A": a, "B": b}))
    assert res.verdict == "clean", res.diagnostics
    want = a.T.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(res.outputs["D"], want, rtol=1e-6, atol=1e-6)
    assert res.outputs["dmax"][0] == res.outputs["D"].max()


def test_redux_of_a_warp_uniform_source():
    # a uniform scalar source is the same value in all 32 lanes: max|x| is |x|, the sum is 32*x
    res = _run("fragments_redux_uniform", {})
    assert (res.outputs["out_f"] == np.float32(1.5)).all()
    assert (res.outputs["out_i"] == 96).all()
