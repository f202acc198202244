"""tcgen05 / TMEM in NumSim (issue #4): descriptors, ld/st maps, cp/shift, MMA numerics, lifecycle.

Descriptor decoders are checked against the hand-computed bit patterns of
reference/ptx-encodings.md §4-5; operand images for the MMA tests are built here from the
CuTe (shape):(stride) tables of the canonical layouts (§4.3), evaluated by a small layout
interpreter, not by the engine's address formulas.
"""
from __future__ import annotations

import importlib.util

import ml_dtypes
import numpy as np
import pytest

import modelcheck
from modelcheck import numsim
from modelcheck.numsim.descriptors import (DescriptorError, DescriptorUnsupported, InstrDescriptor, SmemDescriptor,
                                           matrix_addresses)
from tests.manifest import INPUT_BUILDERS, KERNELS, ROOT
from tests.modelcheck.numsim.test_tma import swizzled_offset

FIXTURE = ROOT / "tests" / "fixtures" / "numsim" / "tmem_lifecycle.py"


def builder(module: str, name: str):
    spec = importlib.util.spec_from_file_location(f"_inputs_{module}", INPUT_BUILDERS / f"{module}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, name)


def line_of(path, snippet: str) -> int:
    lines = [k + 1 for k, text in enumerate(path.read_text().splitlines()) if snippet in text]
    assert len(lines) == 1, (snippet, lines)
    return lines[0]


# --------------------------------------------------------------------------- kernels vs numpy

@pytest.mark.parametrize("consts", [{}, {"M": 256, "N": 256, "K": 128}])
def test_gemm_ws_matches_an_fp64_reference_within_fp32_rounding(consts):
    k = modelcheck.load(KERNELS / "gemm_ws.py", **consts)
    c = k.constants
    inputs = builder("gemm", "gemm_ws")(c, seed=7)
    a, b = builder("gemm", "operands")(c, seed=7)
    res = numsim.run(k.func, inputs)
    assert res.verdict == "clean" and res.termination == "completed", res.diagnostics
    ref = a.astype(np.float64) @ b.astype(np.float64).T
    got = res.outputs["D"]
    assert got.dtype == np.float32
    # one fp32 rounding per MMA (K / 16 of them) on top of the exact products
    bound = (c["K"] // 16 + 1) * np.finfo(np.float32).eps * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(
        np.float64)).T)
    assert (np.abs(got - ref) <= bound).all()
    assert not np.array_equal(got, np.zeros_like(got))
    assert res.stats["ctas"] == (c["M"] // 128) * (c["N"] // 128)


def test_gemm_ws_sync_events_follow_the_ring():
    k = modelcheck.load(KERNELS / "gemm_ws.py")
    trace = numsim.Trace()
    res = numsim.run(k.func, builder("gemm", "gemm_ws")(k.constants), observers=[trace])
    assert res.verdict == "clean"
    kinds = [e.kind for e in trace.sync]
    for kind in ("tcgen05.alloc", "tcgen05.relinquish_alloc_permit", "tcgen05.dealloc", "tcgen05.wait::ld",
                 "tcgen05.fence::before_thread_sync", "tcgen05.fence::after_thread_sync"):
        assert kind in kinds, kind
    commits = [e for e in trace.sync if e.kind == "async.issue" and e.details.get("kind") == "tcgen05.commit"]
    assert len(commits) == 9 and all(e.barrier[0] == "mbarrier" and e.details["noinc"] for e in commits)
    mmas = [e for e in trace.sync if e.kind == "async.issue" and e.details.get("kind") == "tcgen05.mma"]
    assert len(mmas) == 32 and [e.details["accumulate"] for e in mmas] == [False] + [True] * 31
    # every commit arrives after the completions of the MMAs it tracks
    done = {e.details["op"]: e.seq for e in trace.sync if e.kind == "async.complete"}
    arrivals = [e for e in trace.sync if e.kind == "mbarrier.arrive" and e.details.get("kind") == "tcgen05.commit"]
    assert len(arrivals) == 9
    assert [e.details["op"] for e in arrivals] == [e.details["op"] for e in commits]
    for e in arrivals[:-1]:     # each ring commit tracks the 4 MMAs of its stage
        assert len(e.details["ops"]) == 4 and all(done[op] < e.seq for op in e.details["ops"])
    # the final commit (to mma_done) adds no new MMA but covers all earlier ones: it arrives after all of them
    assert arrivals[-1].details["ops"] == [] and max(done.values()) < arrivals[-1].seq
    # MMA operand reads are async-proxy shared reads; the accumulator lives in the tmem space
    mma_ops = {e.details["op"] for e in mmas}
    recs = [r for r in trace.accesses if r.actor in mma_ops]
    assert {(r.space, r.kind, r.proxy) for r in recs} == {("shared", "read", "async"), ("tmem", "read", "async"),
                                                          ("tmem", "write", "async")}
    assert sum(r.size for r in recs if r.space == "shared") == 32 * 2 * 128 * 32   # 32 MMAs x (A + B) x 128 x 32 B


def test_mma_ts_matches_numpy():
    k = modelcheck.load(KERNELS / "mma_ts.py")
    inputs = builder("gemm", "mma_ts")(k.constants, seed=3)
    a, b = builder("gemm", "operands")(k.constants, seed=3)
    trace = numsim.Trace()
    res = numsim.run(k.func, inputs, observers=[trace])
    assert res.verdict == "clean" and res.termination == "completed", res.diagnostics
    ref = a.astype(np.float64) @ b.astype(np.float64).T
    np.testing.assert_allclose(res.outputs["D"], ref, rtol=1e-6, atol=1e-6)
    mma = [e for e in trace.sync if e.kind == "async.issue" and e.details.get("kind") == "tcgen05.mma"]
    assert [e.details["form"] for e in mma] == ["ts", "ts"]
    a_reads = [r for r in trace.accesses if r.actor == mma[0].details["op"] and r.space == "tmem"
               and r.kind == "read"]
    assert len(a_reads) == 128 and {r.size for r in a_reads} == {8 * 4}     # K = 16 bf16 = 8 columns per lane


# --------------------------------------------------------------------------- descriptors

@pytest.mark.parametrize("value,fields", [
    (0x08400490, dict(d_type=1, a_type=1, b_type=1, m=128, n=256, transpose_a=0, transpose_b=0)),   # bf16 -> f32
    (0x04100010, dict(d_type=1, a_type=0, b_type=0, m=64, n=64)),                                     # f16 -> f32
    (0x08200910, dict(d_type=1, a_type=2, b_type=2, m=128, n=128)),                                   # tf32 -> f32
    (0x08200000, dict(d_type=0, a_type=0, b_type=0, m=128, n=128)),                                   # f16 -> f16
])
def test_instruction_descriptor_decodes_the_reference_patterns(value, fields):
    d = InstrDescriptor.decode(value)
    for name, want in fields.items():
        assert getattr(d, name) == want, name
    assert InstrDescriptor.encode(d.m, d.n, d.a_type, d.b_type, d.d_type) == value
    d.validate("kind::tf32" if d.a_type == 2 else "kind::f16")


def test_instruction_descriptor_bits_of_transpose_negate_and_shift():
    d = InstrDescriptor.decode(1 << 13 | 1 << 14 | 1 << 15 | 1 << 16 | 3 << 30 | 1 << 2)
    assert (d.negate_a, d.negate_b, d.transpose_a, d.transpose_b, d.max_shift, d.sparse) == (1, 1, 1, 1, 3, 1)


@pytest.mark.parametrize("value,kind,field", [
    (0x08400490 | 1 << 2, "kind::f16", "sparse"),
    (0x08400490 | 1 << 30, "kind::f16", "max_shift"),
    ((0x08400490 & ~(0x1F << 24)) | (6 << 24), "kind::f16", "m"),     # M = 96
    (0x08400490 & ~(0x3F << 17), "kind::f16", "n"),                     # N = 0
    (0x08400490 & ~(3 << 4), "kind::f16", "d_type"),                    # bf16 into an f16 accumulator
    (0x08400490 | 1 << 10 | 1 << 11, "kind::f16", "b_type"),
    (0x08200910 & ~(7 << 7), "kind::tf32", "a_type"),
    (0x08400490 | 1 << 6, "kind::f16", "reserved"),
])
def test_instruction_descriptor_validation_names_the_field(value, kind, field):
    with pytest.raises(DescriptorError) as info:
        InstrDescriptor.decode(value).validate(kind)
    assert info.value.field == field


def test_smem_descriptor_decodes_the_reference_example():
    # bf16 K-major, 128B swizzle, tile at 0x400, 8-row groups 1024 B apart (ptx-encodings §4.3)
    value = 0x4000404000010040
    d = SmemDescriptor.decode(value)
    assert (d.start, d.lbo, d.sbo, d.version, d.base_offset, d.lbo_mode, d.layout) == (0x400, 16, 1024, 1, 0, 0, 2)
    assert SmemDescriptor.encode(0x400, 16, 1024, 2) == value
    d.validate()


@pytest.mark.parametrize("value,field,unsupported", [
    (0x4000404000010040 & ~(1 << 46), "version", False),
    (0x4000404000010040 | 1 << 52, "lbo_mode", False),
    ((0x4000404000010040 & ~(7 << 61)) | 3 << 61, "layout", False),
    (0x4000404000010040 | 1 << 14, "reserved", False),
    (0x4000404000010040 | 2 << 49, "base_offset", True),
])
def test_smem_descriptor_validation_names_the_field(value, field, unsupported):
    with pytest.raises(DescriptorError) as info:
        SmemDescriptor.decode(value).validate()
    assert info.value.field == field
    assert isinstance(info.value, DescriptorUnsupported) == unsupported


def cute(shape, stride, index: int) -> int:
    """Offset of a 1-D index in a (nested) CuTe mode: colexicographic decomposition, last extent unbounded."""
    shape, stride = list(_flat(shape)), list(_flat(stride))
    off = 0
    for i, (s, d) in enumerate(zip(shape, stride)):
        if i == len(shape) - 1:
            off += index * d
        else:
            off += (index % s) * d
            index //= s
    return off


def _flat(t):
    if isinstance(t, tuple):
        for x in t:
            yield from _flat(x)
    else:
        yield t


def canonical(major: str, span: int, esz: int, lbo: int, sbo: int):
    """(row mode, k mode) of the PTX canonical layouts, strides in elements (ptx-encodings §4.3)."""
    t = 16 // esz
    lbo_e, sbo_e = lbo // esz, sbo // esz
    if major == "K":
        rows = ((8, 1 << 20), (t * max(span // 16, 1), sbo_e)) if span else ((8, 1 << 20), (t, sbo_e))
        kmode = ((t, 1 << 20), (1, t)) if span else ((t, 1 << 20), (1, lbo_e))
        return rows, kmode
    if span == 0:
        return ((t, 1, 1 << 20), (1, t, sbo_e)), ((8, 1 << 20), (t, lbo_e))
    n = span // 16
    return ((t, n, 1 << 20), (1, t, lbo_e)), ((8, 1 << 20), (n * t, sbo_e))


def layout_bytes(major, span, esz, lbo, sbo, rows, k):
    (rs, rd), (ks, kd) = canonical(major, span, esz, lbo, sbo)
    out = np.zeros((rows, k), dtype=np.int64)
    for r in range(rows):
        for kk in range(k):
            out[r, kk] = swizzled_offset((cute(rs, rd, r) + cute(ks, kd, kk)) * esz, span)
    return out


@pytest.mark.parametrize("major,span,esz,lbo,sbo,rows,k", [
    ("K", 0, 4, 256, 128, 16, 16),      # the PTX example ((8,2),(4,4)):((4,32),(1,64)) for tf32
    ("K", 0, 2, 128, 256, 64, 16),
    ("K", 32, 2, 16, 256, 32, 16),
    ("K", 64, 2, 16, 512, 64, 16),
    ("K", 128, 2, 16, 1024, 128, 16),
    ("K", 128, 4, 16, 1024, 64, 8),
    ("MN", 0, 2, 1024, 128, 64, 16),
    ("MN", 32, 2, 256, 1024, 64, 16),
    ("MN", 64, 2, 512, 1024, 64, 16),    # the PTX example ((8,4,2),(8,2)):((1,8,256),(32,512)) for bf16
    ("MN", 128, 2, 2048, 1024, 128, 16),
])
def test_matrix_addresses_follow_the_canonical_layout_tables(major, span, esz, lbo, sbo, rows, k):
    layout = {0: 0, 32: 6, 64: 4, 128: 2}[span]
    base = 0x2000
    d = SmemDescriptor.decode(SmemDescriptor.encode(base, lbo, sbo, layout))
    got = matrix_addresses(d, rows, k, esz, major == "MN") - base
    np.testing.assert_array_equal(got, layout_bytes(major, span, esz, lbo, sbo, rows, k))
    assert len(np.unique(got)) == rows * k          # a layout never maps two elements to one place


def atom32_offset(offset: int) -> int:
    """CuTe Swizzle<2,5,2> written out: the 32-byte chunk j of 128-byte line l sits at j ^ (l % 4)."""
    line, within = divmod(offset, 128)
    chunk, byte = divmod(within, 32)
    return line * 128 + (chunk ^ (line % 4)) * 32 + byte


def atom32_bytes(esz, lbo, sbo, rows, k):
    """Layout type 1 (MN-major): CUTLASS make_umma_desc's canonical form in 16-byte units
    ((8,n),(4,k)):((1,LBO),(8,SBO)), in elements ((T,8,n),(4,k)):((1,T,LBO),(8T,SBO)), then Swizzle<2,5,2>."""
    t = 16 // esz
    rs, rd = (t, 8, 1 << 20), (1, t, lbo // esz)
    ks, kd = (4, 1 << 20), (8 * t, sbo // esz)
    out = np.zeros((rows, k), dtype=np.int64)
    for r in range(rows):
        for kk in range(k):
            out[r, kk] = atom32_offset((cute(rs, rd, r) + cute(ks, kd, kk)) * esz)
    return out


@pytest.mark.parametrize("lbo,sbo,rows,k", [(16384, 512, 128, 8), (512, 1024, 64, 8), (4096, 512, 256, 16)])
def test_atom32_mn_major_addresses_follow_the_cutlass_canonical_form(lbo, sbo, rows, k):
    base = 0x4000
    d = SmemDescriptor.decode(SmemDescriptor.encode(base, lbo, sbo, 1))
    got = matrix_addresses(d, rows, k, 4, True) - base
    np.testing.assert_array_equal(got, atom32_bytes(4, lbo, sbo, rows, k))
    assert len(np.unique(got)) == rows * k


def test_atom32_layout_is_mn_major_only():
    d = SmemDescriptor.decode(SmemDescriptor.encode(0x4000, 16, 512, 1))
    d.validate()        # a valid encoding
    with pytest.raises(DescriptorUnsupported) as info:
        matrix_addresses(d, 128, 8, 4, False)
    assert info.value.field == "layout" and "K-major" in info.value.message


def test_ptx_k_major_tf32_example_in_elements():
    d = SmemDescriptor.decode(SmemDescriptor.encode(0, 256, 128, 0))
    assert (d.lbo >> 4, d.sbo >> 4) == (16, 8)        # the encoded fields of the PTX example
    got = matrix_addresses(d, 16, 16, 4, False) // 4
    want = [[(r % 8) * 4 + (r // 8) * 32 + (c % 4) + (c // 4) * 64 for c in range(16)] for r in range(16)]
    np.testing.assert_array_equal(got, want)


# --------------------------------------------------------------------------- single MMAs: layouts and numerics

MMA_KERNEL = '''
from tvm_tirx.script import tirx as T

@T.function
def one_mma(a_img: T.Tensor(({wa},), T.uint32), b_img: T.Tensor(({wb},), T.uint32), d_init: T.Tensor((128, {n}), T.uint32),
            a_hi: T.uint64, b_hi: T.uint64, idesc: T.uint32, d_off: T.uint32, mask0: T.uint32, acc: T.uint32,
            out: T.Tensor((128, {n}), T.uint32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 128) as tx:
                a_s = T.alloc_tensor(ty_args=[T.Tensor(({wa},), T.uint32, scope="shared", align=1024)])
                b_s = T.alloc_tensor(ty_args=[T.Tensor(({wb},), T.uint32, scope="shared", align=1024)])
                bar = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                slot = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint32, scope="shared")])
                reg = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint32, scope="local")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                for i in range({wa} // 128):
                    a_s[i * 128 + tx] = a_img[i * 128 + tx]
                for i in range({wb} // 128):
                    b_s[i * 128 + tx] = b_img[i * 128 + tx]
                T.ptx.fence.proxy.async_.shared__cta()
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(bar.ptr_to([0]), T.uint32(1))
                if warp == 0:
                    T.ptx.tcgen05.alloc.cta_group__1.sync.aligned.shared__cta.b32(slot.ptr_to([0]), T.uint32(256))
                    T.ptx.tcgen05.relinquish_alloc_permit.cta_group__1.sync.aligned()
                T.ptx.tcgen05.fence__before_thread_sync()
                T.cuda.cta_sync()
                T.ptx.tcgen05.fence__after_thread_sync()
                taddr: T.let[T.uint32] = slot[0]
                for c in range({n}):
                    reg[0] = d_init[warp * 32 + lane, c]
                    T.ptx["tcgen05.st.sync.aligned.32x32b.x1.b32"](taddr + T.Cast("uint32", warp * 32 * 65536 + c), reg[0])
                T.ptx.tcgen05.wait__st.sync.aligned()
                T.ptx.tcgen05.fence__before_thread_sync()
                T.cuda.cta_sync()
                T.ptx.tcgen05.fence__after_thread_sync()
                if tx == 0:
                    a_desc: T.let[T.uint64] = (T.Cast("uint64", a_s.ptr_to([0])) & T.uint64(0x3FFFF)) >> T.uint64(4) | a_hi
                    b_desc: T.let[T.uint64] = (T.Cast("uint64", b_s.ptr_to([0])) & T.uint64(0x3FFFF)) >> T.uint64(4) | b_hi
                    T.ptx.tcgen05.mma.cta_group__1.kind__{kind}(taddr + d_off, a_desc, b_desc, idesc, mask0, 0, 0, 0, acc)
                    T.ptx.tcgen05.commit.cta_group__1.mbarrier__arrive__one.shared__cluster.b64(bar.ptr_to([0]))
                T.cuda.mbarrier_wait(bar.ptr_to([0]), 0)
                T.ptx.tcgen05.fence__after_thread_sync()
                for c in range({n}):
                    T.ptx["tcgen05.ld.sync.aligned.32x32b.x1.b32"](reg[0], taddr + T.Cast("uint32", warp * 32 * 65536 + c))
                    T.ptx.tcgen05.wait__ld.sync.aligned()
                    out[warp * 32 + lane, c] = reg[0]
                T.ptx.tcgen05.fence__before_thread_sync()
                T.cuda.cta_sync()
                if warp == 0:
                    T.ptx.tcgen05.fence__after_thread_sync()
                    T.ptx.tcgen05.dealloc.cta_group__1.sync.aligned.b32(taddr, T.uint32(256))
'''

LAYOUT_CODE = {0: 0, 32: 6, 64: 4, 128: 2, "atom32": 1}
NP_IN = {"bfloat16": ml_dtypes.bfloat16, "float16": np.float16, "tf32": np.float32}


def image(mat: np.ndarray, major, span, lbo, sbo) -> np.ndarray:
    """The shared bytes of `mat` (rows x K) in a canonical layout, as uint32 words (a multiple of 128)."""
    esz = mat.dtype.itemsize
    offs = (atom32_bytes(esz, lbo, sbo, *mat.shape) if span == "atom32"
            else layout_bytes(major, span, esz, lbo, sbo, *mat.shape))
    assert len(np.unique(offs)) == offs.size, "overlapping layout parameters"
    size = -(-(int(offs.max()) + esz) // 512) * 512
    img = np.zeros(size, dtype=np.uint8)
    raw = mat.view(np.uint8).reshape(mat.shape[0], mat.shape[1], esz)
    for r in range(mat.shape[0]):
        for k in range(mat.shape[1]):
            img[offs[r, k]:offs[r, k] + esz] = raw[r, k]
    return img.view(np.uint32)


def d_lane_of(m: int, l0: int) -> np.ndarray:
    i = np.arange(m)
    return i if m == 128 else l0 + 32 * (i // 16) + i % 16


MMA_CASES = [
    # kind, in dtype, M, N, (A major, swizzle, LBO, SBO), (B ...), D f16?, accumulate, L0, mask0, negate
    ("f16", "bfloat16", 128, 64, ("K", 128, 16, 1024), ("K", 0, 128, 256), False, True, 0, 0, (0, 0)),
    ("f16", "float16", 64, 32, ("MN", 64, 512, 1024), ("MN", 0, 512, 128), False, False, 16, 0, (0, 0)),
    ("f16", "float16", 128, 32, ("K", 32, 16, 256), ("K", 64, 16, 512), True, True, 0, 0, (0, 0)),
    ("tf32", "tf32", 128, 16, ("K", 128, 16, 1024), ("K", 0, 128, 256), False, True, 0, 0x0000FF00, (1, 0)),
    ("f16", "bfloat16", 128, 64, ("K", 64, 16, 512), ("MN", 128, 1024, 1024), False, False, 0, 0, (0, 1)),
    ("f16", "bfloat16", 64, 48, ("MN", 32, 256, 1024), ("K", 32, 16, 256), False, True, 0, 0, (0, 0)),
    # tf32 MN-major operands in the 128B swizzle with 32B atomicity (layout type 1)
    ("tf32", "tf32", 128, 32, ("MN", "atom32", 1024, 512), ("MN", "atom32", 1024, 512), False, True, 0, 0, (0, 0)),
]


@pytest.mark.parametrize("case", MMA_CASES, ids=lambda c: f"{c[1]}-M{c[2]}N{c[3]}-A{c[4][0]}{c[4][1]}-B{c[5][0]}"
                                                          f"{c[5][1]}")
def test_single_mma_layouts_and_numerics(case):
    kind, dt, m, n, a_lay, b_lay, d_f16, accumulate, l0, mask0, (neg_a, neg_b) = case
    rng = np.random.default_rng(hash(case) % 2**32)
    kdim = 8 if kind == "tf32" else 16
    a = rng.standard_normal((m, kdim)).astype(NP_IN[dt])
    b = rng.standard_normal((n, kdim)).astype(NP_IN[dt])
    code = {"bfloat16": 1, "float16": 0, "tf32": 2}[dt]
    idesc = InstrDescriptor.encode(m, n, code, code, 0 if d_f16 else 1, transpose_a=a_lay[0] == "MN",
                                   transpose_b=b_lay[0] == "MN", negate_a=neg_a, negate_b=neg_b)
    a_img, b_img = image(a, *a_lay), image(b, *b_lay)
    d0 = rng.standard_normal((128, n))
    d_init = (d0.astype(np.float16).view(np.uint16).astype(np.uint32) if d_f16
              else d0.astype(np.float32).view(np.uint32))
    func = modelcheck.parse(MMA_KERNEL.format(wa=a_img.size, wb=b_img.size, n=n, kind=kind))
    inputs = {"a_img": a_img, "b_img": b_img, "d_init": d_init, "idesc": idesc, "d_off": l0 << 16,
              "a_hi": SmemDescriptor.encode(0, a_lay[2], a_lay[3], LAYOUT_CODE[a_lay[1]]),
              "b_hi": SmemDescriptor.encode(0, b_lay[2], b_lay[3], LAYOUT_CODE[b_lay[1]]),
              "mask0": mask0, "acc": int(accumulate), "out": np.zeros((128, n), np.uint32)}
    res = numsim.run(func, inputs)
    assert res.verdict == "clean", res.diagnostics
    # reference: tf32 drops the low 13 mantissa bits; exact products, one rounding into D
    af, bf = a.astype(np.float64), b.astype(np.float64)
    if kind == "tf32":
        af = (a.view(np.uint32) & 0xFFFFE000).view(np.float32).astype(np.float64)
        bf = (b.view(np.uint32) & 0xFFFFE000).view(np.float32).astype(np.float64)
    prod = (-af if neg_a else af) @ (-bf if neg_b else bf).T
    lanes = d_lane_of(m, l0)
    old = d0.astype(np.float16) if d_f16 else d0.astype(np.float32)
    want = old.astype(np.float64).copy()
    for i, lane in enumerate(lanes):
        if not (mask0 >> lane) & 1 if lane < 32 else True:
            want[lane] = prod[i] + (want[lane] if accumulate else 0)
    got = res.outputs["out"]
    if d_f16:
        got_f = (got & 0xFFFF).astype(np.uint16).view(np.float16).astype(np.float64)
        np.testing.assert_allclose(got_f, want.astype(np.float16).astype(np.float64), rtol=2e-3, atol=2e-3)
    else:
        np.testing.assert_allclose(got.view(np.float32), want.astype(np.float32), rtol=1e-6, atol=1e-6)
    untouched = np.setdiff1d(np.arange(128), lanes)
    np.testing.assert_array_equal(got[untouched], d_init[untouched])          # lanes outside D keep their cells
    if mask0:
        disabled = [ln for ln in range(32) if (mask0 >> ln) & 1]
        np.testing.assert_array_equal(got[disabled], d_init[disabled])


def test_mma_descriptor_errors_name_the_field_and_the_line():
    k = modelcheck.load(KERNELS / "gemm_ws.py", IDESC=16 + 128 + 1024 + 16 * 131072 + 6 * 16777216)  # M = 96
    res = numsim.run(k.func, builder("gemm", "gemm_ws")(k.constants))
    (d,) = res.diagnostics
    assert d.kind == "invalid_descriptor" and d.details["field"] == "m" and "M = 96" in d.message
    assert d.span.line == line_of(KERNELS / "gemm_ws.py", "kind__f16(")
    # a shared-memory descriptor without the sm_100 version bits
    n = 16
    a = np.zeros((128, 16), ml_dtypes.bfloat16)
    img = image(a, "K", 128, 16, 1024)
    func = modelcheck.parse(MMA_KERNEL.format(wa=img.size, wb=img.size, n=n, kind="f16"))
    res = numsim.run(func, {"a_img": img, "b_img": img, "d_init": np.zeros((128, n), np.uint32),
                            "a_hi": SmemDescriptor.encode(0, 16, 1024, 2, version=0),
                            "b_hi": SmemDescriptor.encode(0, 16, 1024, 2), "idesc": InstrDescriptor.encode(128, n, 1, 1),
                            "d_off": 0, "mask0": 0, "acc": 0, "out": np.zeros((128, n), np.uint32)})
    (d,) = res.diagnostics
    assert d.kind == "invalid_descriptor" and d.details["field"] == "version" and "version" in d.message
    assert "kind__f16(taddr + d_off" in func.source.splitlines()[d.span.line - 1]
    # the 128B-base-32B layout is a valid encoding the sources leave open: unsupported, never guessed
    with pytest.raises(numsim.UnsupportedTIRxError, match="layout"):
        numsim.run(func, {"a_img": img, "b_img": img, "d_init": np.zeros((128, n), np.uint32),
                          "a_hi": SmemDescriptor.encode(0, 16, 1024, 1), "b_hi": SmemDescriptor.encode(0, 16, 1024, 2),
                          "idesc": InstrDescriptor.encode(128, n, 1, 1), "d_off": 0, "mask0": 0, "acc": 0,
                          "out": np.zeros((128, n), np.uint32)})


# --------------------------------------------------------------------------- ld / st maps

LDST_KERNEL = '''
from tvm_tirx.script import tirx as T

@T.function
def ldst(out: T.Tensor((4, 32, 32), T.uint32), back: T.Tensor((4, 32, {regs}), T.uint32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 128) as tx:
                slot = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint32, scope="shared")])
                regs = T.alloc_tensor(ty_args=[T.Tensor(({regs},), T.uint32, scope="local")])
                cell = T.alloc_tensor(ty_args=[T.Tensor((32,), T.uint32, scope="local")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if warp == 0:
                    T.ptx.tcgen05.alloc.cta_group__1.sync.aligned.shared__cta.b32(slot.ptr_to([0]), T.uint32(64))
                    T.ptx.tcgen05.relinquish_alloc_permit.cta_group__1.sync.aligned()
                T.ptx.tcgen05.fence__before_thread_sync()
                T.cuda.cta_sync()
                T.ptx.tcgen05.fence__after_thread_sync()
                taddr: T.let[T.uint32] = slot[0]
                base: T.let[T.uint32] = taddr + T.Cast("uint32", (warp * 32 + {lane_off}) * 65536 + {col0})
                for r in range({regs}):
                    regs[r] = T.Cast("uint32", tx * 1000 + r + 1)
                T.ptx["tcgen05.st.sync.aligned.{shape}.x{num}{unpack}.b32"](base, {st_split}{reg_list})
                T.ptx.tcgen05.wait__st.sync.aligned()
                T.ptx["tcgen05.ld.sync.aligned.32x32b.x32.b32"]({cell_list}, taddr + T.Cast("uint32", warp * 32 * 65536))
                T.ptx.tcgen05.wait__ld.sync.aligned()
                for c in range(32):
                    out[warp, lane, c] = cell[c]
                for r in range({regs}):
                    regs[r] = T.uint32(0)
                T.ptx["tcgen05.ld.sync.aligned.{shape}.x{num}{pack}.b32"]({reg_list}, base{ld_split})
                T.ptx.tcgen05.wait__ld.sync.aligned()
                for r in range({regs}):
                    back[warp, lane, r] = regs[r]
                T.ptx.tcgen05.fence__before_thread_sync()
                T.cuda.cta_sync()
                if warp == 0:
                    T.ptx.tcgen05.fence__after_thread_sync()
                    T.ptx.tcgen05.dealloc.cta_group__1.sync.aligned.b32(taddr, T.uint32(64))
'''


def reference_cell(shape: str, num: int, t: int, r: int) -> tuple[int, int]:
    """(lane, column) offsets of register r of thread t: the table of ptx-encodings §3."""
    if shape == "32x32b":
        return t, r
    if shape == "16x64b":
        return t // 4 + 8 * (t % 2), 2 * r + (t // 2) % 2
    if shape == "16x128b":
        return t // 4 + 8 * (r % 2), 4 * (r // 2) + t % 4
    if shape == "16x256b":
        return t // 4 + 8 * ((r // 2) % 2), 8 * (r // 4) + 2 * (t % 4) + r % 2
    assert shape == "16x32bx2"
    return (t, r) if t < 16 else (t - 16, num + r)       # second half at taddr + immHalfSplitoff (= num)


@pytest.mark.parametrize("shape,num,lane_off,col0", [("32x32b", 4, 0, 3), ("16x64b", 4, 16, 0), ("16x128b", 2, 0, 5),
                                                     ("16x256b", 2, 16, 2), ("16x32bx2", 2, 0, 1),
                                                     ("32x32b", 32, 0, 0)])
def test_ld_st_place_registers_by_the_lane_maps(shape, num, lane_off, col0):
    regs = {"32x32b": 1, "16x64b": 1, "16x128b": 2, "16x256b": 4, "16x32bx2": 1}[shape] * num
    reg_list = ", ".join(f"regs[{r}]" for r in range(regs))
    split = shape == "16x32bx2"
    text = LDST_KERNEL.format(regs=regs, shape=shape, num=num, lane_off=lane_off, col0=col0, reg_list=reg_list,
                              cell_list=", ".join(f"cell[{c}]" for c in range(32)), unpack="", pack="",
                              st_split=f"{num}, " if split else "", ld_split=f", {num}" if split else "")
    out = np.zeros((4, 32, 32), np.uint32)
    res = numsim.run(modelcheck.parse(text), {"out": out, "back": np.zeros((4, 32, regs), np.uint32)})
    assert res.verdict == "clean", res.diagnostics
    want = np.zeros((4, 32, 32), np.uint32)
    for q in range(4):
        for t in range(32):
            for r in range(regs):
                ln, col = reference_cell(shape, num, t, r)
                want[q, lane_off + ln, col0 + col] = (32 * q + t) * 1000 + r + 1
    np.testing.assert_array_equal(res.outputs["out"], want)
    tx = np.arange(128).reshape(4, 32, 1)
    np.testing.assert_array_equal(res.outputs["back"], tx * 1000 + np.arange(regs) + 1)


def test_unpack_and_pack_16b():
    text = LDST_KERNEL.format(regs=2, shape="32x32b", num=2, lane_off=0, col0=0, reg_list="regs[0], regs[1]",
                              cell_list=", ".join(f"cell[{c}]" for c in range(32)), unpack=".unpack::16b",
                              pack=".pack::16b", st_split="", ld_split="")
    res = numsim.run(modelcheck.parse(text), {"out": np.zeros((4, 32, 32), np.uint32),
                                              "back": np.zeros((4, 32, 2), np.uint32)})
    assert res.verdict == "clean", res.diagnostics
    tx = np.arange(128).reshape(4, 32)
    for r in range(2):
        v = tx * 1000 + r + 1
        np.testing.assert_array_equal(res.outputs["out"][:, :, 2 * r], v & 0xFFFF)
        np.testing.assert_array_equal(res.outputs["out"][:, :, 2 * r + 1], v >> 16)
        np.testing.assert_array_equal(res.outputs["back"][:, :, r], v)


def test_ld_outside_the_warps_lane_quarter_is_rejected():
    text = LDST_KERNEL.format(regs=1, shape="32x32b", num=1, lane_off=0, col0=0, reg_list="regs[0]",
                              cell_list=", ".join(f"cell[{c}]" for c in range(32)), unpack="", pack="",
                              st_split="", ld_split="").replace("(warp * 32 + 0) * 65536", "(warp % 2 * 32) * 65536")
    res = numsim.run(modelcheck.parse(text), {"out": np.zeros((4, 32, 32), np.uint32),
                                              "back": np.zeros((4, 32, 1), np.uint32)})
    (d,) = res.diagnostics
    assert d.kind == "tmem_access_invalid_target"
    q = d.details["quarter"]
    assert f"may access TMEM lanes {32 * q}-{32 * q + 31} only" in d.message
    assert d.details["lanes"] == [32 * (q % 2), 32 * (q % 2) + 31] and q >= 2


def test_ld_st_from_part_of_a_warp_is_a_collective_divergence():
    text = LDST_KERNEL.format(regs=1, shape="32x32b", num=1, lane_off=0, col0=0, reg_list="regs[0]",
                              cell_list=", ".join(f"cell[{c}]" for c in range(32)), unpack="", pack="",
                              st_split="", ld_split="")
    st = '                T.ptx["tcgen05.st.sync.aligned.32x32b.x1.b32"](base, regs[0])\n'
    assert st in text
    func = modelcheck.parse(text.replace(st, "                if lane < 8:\n    " + st))
    res = numsim.run(func, {"out": np.zeros((4, 32, 32), np.uint32), "back": np.zeros((4, 32, 1), np.uint32)})
    (d,) = res.diagnostics
    assert d.kind == "warp_collective_divergence" and "tcgen05.st" in d.message and d.details["missing_lanes"][0] == 8


# --------------------------------------------------------------------------- cp and shift

CP_KERNEL = '''
from tvm_tirx.script import tirx as T

@T.function
def tc_cp(img: T.Tensor(({words},), T.uint32), s_hi: T.uint64, out: T.Tensor((128, 8), T.uint32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 128) as tx:
                src = T.alloc_tensor(ty_args=[T.Tensor(({words},), T.uint32, scope="shared", align=1024)])
                bar = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                slot = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint32, scope="shared")])
                cell = T.alloc_tensor(ty_args=[T.Tensor((8,), T.uint32, scope="local")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                for i in range({words} // 128):
                    src[i * 128 + tx] = img[i * 128 + tx]
                T.ptx.fence.proxy.async_.shared__cta()
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(bar.ptr_to([0]), T.uint32(1))
                if warp == 0:
                    T.ptx.tcgen05.alloc.cta_group__1.sync.aligned.shared__cta.b32(slot.ptr_to([0]), T.uint32(32))
                    T.ptx.tcgen05.relinquish_alloc_permit.cta_group__1.sync.aligned()
                T.ptx.tcgen05.fence__before_thread_sync()
                T.cuda.cta_sync()
                T.ptx.tcgen05.fence__after_thread_sync()
                taddr: T.let[T.uint32] = slot[0]
                if tx == 0:
                    s_desc: T.let[T.uint64] = (T.Cast("uint64", src.ptr_to([0])) & T.uint64(0x3FFFF)) >> T.uint64(4) | s_hi
                    {op}
                    T.ptx.tcgen05.commit.cta_group__1.mbarrier__arrive__one.shared__cluster.b64(bar.ptr_to([0]))
                T.cuda.mbarrier_wait(bar.ptr_to([0]), 0)
                T.ptx.tcgen05.fence__after_thread_sync()
                T.ptx["tcgen05.ld.sync.aligned.32x32b.x8.b32"](cell[0], cell[1], cell[2], cell[3], cell[4], cell[5], cell[6], cell[7], taddr + T.Cast("uint32", warp * 32 * 65536))
                T.ptx.tcgen05.wait__ld.sync.aligned()
                for c in range(8):
                    out[warp * 32 + lane, c] = cell[c]
                T.ptx.tcgen05.fence__before_thread_sync()
                T.cuda.cta_sync()
                if warp == 0:
                    T.ptx.tcgen05.fence__after_thread_sync()
                    T.ptx.tcgen05.dealloc.cta_group__1.sync.aligned.b32(taddr, T.uint32(32))
'''


@pytest.mark.parametrize("shape,multicast,rows,chunks,dest", [
    ("128x256b", "", 128, 2, lambda r: [r]),
    ("128x128b", "", 128, 1, lambda r: [r]),
    ("4x256b", "", 4, 2, lambda r: [32 * r]),
    ("64x128b", ".warpx2::02_13", 64, 1, lambda r: [r, r + 64]),
    ("64x128b", ".warpx2::01_23", 64, 1, lambda r: [r, r + 32] if r < 32 else [r + 32, r + 64]),
    ("32x128b", ".warpx4", 32, 1, lambda r: [r + 32 * w for w in range(4)]),
])
@pytest.mark.parametrize("span", [0, 128])
def test_cp_copies_descriptor_rows_to_tmem_lanes(shape, multicast, rows, chunks, dest, span):
    # source: a K-major canonical matrix of 16-byte elements (T = 1), rows x chunks
    lbo, sbo = (128 * 16, 128) if span == 0 else (16, 1024)
    offs = layout_bytes("K", span, 16, lbo, sbo, rows, chunks)
    words = -(-(int(offs.max()) + 16) // 512) * 128
    img = np.zeros(words * 4, np.uint8)
    data = np.arange(rows * chunks * 4, dtype=np.uint32).reshape(rows, chunks, 4) * 7 + 3
    for r in range(rows):
        for c in range(chunks):
            img[offs[r, c]:offs[r, c] + 16] = data[r, c].view(np.uint8)
    op = f'T.ptx["tcgen05.cp.cta_group::1.{shape}{multicast}"](taddr, s_desc)'
    func = modelcheck.parse(CP_KERNEL.format(words=words, op=op))
    trace = numsim.Trace()
    res = numsim.run(func, {"img": img.view(np.uint32), "s_hi": SmemDescriptor.encode(0, lbo, sbo,
                                                                                         LAYOUT_CODE[span]),
                            "out": np.zeros((128, 8), np.uint32)}, observers=[trace])
    assert res.termination == "completed", res.diagnostics
    want = np.zeros((128, 8), np.uint32)
    for r in range(rows):
        for lane in dest(r):
            want[lane, :4 * chunks] = data[r].reshape(-1)
    np.testing.assert_array_equal(res.outputs["out"], want)
    cp_ops = {e.details["op"] for e in trace.sync if e.kind == "async.issue" and e.details.get("kind") == "tcgen05.cp"}
    smem = [r for r in trace.accesses if r.actor in cp_ops and r.space == "shared"]
    assert smem and all(r.proxy == "async" and r.kind == "read" for r in smem)
    assert sum(r.size for r in smem) == rows * chunks * 16


def test_shift_moves_the_32_byte_element_of_each_row_down_one_row():
    text = CP_KERNEL.format(words=128, op='T.ptx["tcgen05.shift.cta_group::1.down"](taddr)')
    # fill TMEM first: every warp stores its rows (value = 100 * lane + column)
    fill = '''                for c in range(8):
                    cell[c] = T.Cast("uint32", (warp * 32 + lane) * 100 + c)
                T.ptx["tcgen05.st.sync.aligned.32x32b.x8.b32"](taddr + T.Cast("uint32", warp * 32 * 65536), cell[0], cell[1], cell[2], cell[3], cell[4], cell[5], cell[6], cell[7])
                T.ptx.tcgen05.wait__st.sync.aligned()
                T.ptx.tcgen05.fence__before_thread_sync()
                T.cuda.cta_sync()
                T.ptx.tcgen05.fence__after_thread_sync()
                if tx == 0:
'''
    text = text.replace("                if tx == 0:\n                    s_desc", fill + "                    s_desc")
    res = numsim.run(modelcheck.parse(text), {"img": np.zeros(128, np.uint32), "s_hi": 0,
                                              "out": np.zeros((128, 8), np.uint32)})
    assert res.verdict == "clean", res.diagnostics
    before = np.arange(128)[:, None] * 100 + np.arange(8)[None, :]
    want = before.copy()
    want[1:32] = before[0:31]          # rows 0..30 of the warp's 32 move down; row 0 keeps its value
    np.testing.assert_array_equal(res.outputs["out"], want)


# --------------------------------------------------------------------------- lifecycle

@pytest.mark.parametrize("mode,kind,snippet", [
    (1, "tcgen_partial_warp_participation", "if lane < 16:"),
    (2, "tcgen_invalid_columns", "T.uint32(48)"),
    (3, "tcgen_deallocation_mismatch", "T.uint32(64)"),
    (4, "tcgen_live_allocations_at_exit", None),
    (5, "tmem_access_outside_live_allocation", "65536 + NCOLS"),
])
def test_lifecycle_errors_are_typed_and_point_at_the_op(mode, kind, snippet):
    k = modelcheck.load(FIXTURE, MODE=mode)
    res = numsim.run(k.func, {"out": np.zeros(128, np.uint32)})
    assert res.verdict == "error" and res.termination == "error"
    (d,) = res.diagnostics
    assert d.kind == kind
    lines = FIXTURE.read_text().splitlines()
    if snippet is None:     # live at exit points at the allocation that was never freed
        allocs = [i + 1 for i, t in enumerate(lines) if "tcgen05.alloc" in t]
        assert d.span.line == allocs[-1]
    elif mode == 1:
        assert d.span.line == line_of(FIXTURE, snippet) + 1
    else:
        assert d.span.line == line_of(FIXTURE, snippet)
    assert d.span.file.endswith("tmem_lifecycle.py")


def test_lifecycle_fixed_twin_is_clean_and_round_trips_tmem():
    k = modelcheck.load(FIXTURE, MODE=0)
    trace = numsim.Trace()
    res = numsim.run(k.func, {"out": np.zeros(128, np.uint32)}, observers=[trace])
    assert res.verdict == "clean" and res.diagnostics == ()
    np.testing.assert_array_equal(res.outputs["out"], np.arange(128))
    alloc = next(e for e in trace.sync if e.kind == "tcgen05.alloc")
    assert alloc.details["taddr"] == 0 and alloc.details["ncols"] == 128
    # alloc wrote the TMEM address to shared memory as a generic store (one lane)
    store = [r for r in trace.accesses if r.site == alloc.site]
    assert len(store) == 1 and store[0].space == "shared" and store[0].proxy == "generic" and store[0].size == 4
    tmem = [r for r in trace.accesses if r.space == "tmem"]
    assert tmem and {r.alloc for r in tmem} == {alloc.details["allocation"]}
    assert all(r.actor >= 0 for r in tmem)


ALLOC_KERNEL = '''
from tvm_tirx.script import tirx as T

@T.function
def allocs(out: T.Tensor((2,), T.uint32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                slot = T.alloc_tensor(ty_args=[T.Tensor((2,), T.uint32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                T.ptx.tcgen05.alloc.cta_group__1.sync.aligned.shared__cta.b32(slot.ptr_to([warp]), T.uint32({first}))
                out[warp] = slot[warp]
                {between}
                T.ptx.tcgen05.dealloc.cta_group__1.sync.aligned.b32(slot[warp], T.uint32({first}))
'''


def test_alloc_blocks_until_columns_are_freed():
    func = modelcheck.parse(ALLOC_KERNEL.format(first=512, between="T.cuda.nano_sleep(10)"))
    trace = numsim.Trace()
    res = numsim.run(func, {"out": np.full(2, 99, np.uint32)}, observers=[trace])
    assert res.verdict == "clean", res.diagnostics
    np.testing.assert_array_equal(res.outputs["out"], [0, 0])       # the second got column 0 after the first freed
    allocs = [e for e in trace.sync if e.kind == "tcgen05.alloc"]
    frees = [e for e in trace.sync if e.kind == "tcgen05.dealloc"]
    assert [e.details["blocked"] for e in allocs] == [False, True]
    assert frees[0].seq < allocs[1].seq


def test_alloc_that_can_never_succeed_is_a_deadlock_naming_it():
    func = modelcheck.parse(ALLOC_KERNEL.format(first=512, between="T.cuda.cta_sync()"))
    res = numsim.run(func, {"out": np.zeros(2, np.uint32)})
    (d,) = res.diagnostics
    assert d.kind == "deadlock" and "tcgen05.alloc of 512 columns" in d.message


@pytest.mark.parametrize("second,kind", [("T.ptx.tcgen05.relinquish_alloc_permit.cta_group__1.sync.aligned()",
                                          "tcgen_alloc_after_relinquish"), ("", "tcgen_allocation_size_increase")])
def test_alloc_after_relinquish_or_growing_is_an_error(second, kind):
    text = ALLOC_KERNEL.format(first=32, between="").replace(
        "T.uint32(32))\n", "T.uint32(32))\n                " + second + "\n", 1)
    if not second:
        text = text.replace("slot.ptr_to([warp]), T.uint32(32)", "slot.ptr_to([warp]), T.uint32(32 + 32 * warp)")
    res = numsim.run(modelcheck.parse(text), {"out": np.zeros(2, np.uint32)})
    assert [d.kind for d in res.diagnostics] == [kind]


def test_double_dealloc_kernel_pair():
    bad = numsim.run(modelcheck.load(KERNELS / "tmem_double_dealloc.py").func, {"out": np.zeros(256, np.uint32)})
    (d,) = bad.diagnostics
    assert d.kind == "tcgen_deallocation_mismatch" and "no TMEM allocation is live" in d.message
    assert d.span.line == line_of(KERNELS / "tmem_double_dealloc.py", "dealloc.cta_group__1")
    good = numsim.run(modelcheck.load(KERNELS / "tmem_double_dealloc_fixed.py").func,
                      {"out": np.zeros(256, np.uint32)})
    assert good.verdict == "clean"
    np.testing.assert_array_equal(good.outputs["out"], np.arange(256))
