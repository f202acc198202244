"""TMA tensor maps and cp.async.bulk.tensor in NumSim (issue #4).

The swizzle placement of every mode is checked byte for byte against an implementation
written here from the PTX swizzle tables (a 16-byte chunk moves inside its group of
2/4/8 chunks to position chunk ^ (line % group), line = 128-byte line of the pattern),
not against the engine's XOR.  Tensor-map and descriptor errors name the field; errors
raised by an op carry the op's line.
"""
from __future__ import annotations

import importlib.util
import math
import struct

import numpy as np
import pytest

import modelcheck
from modelcheck import numsim
from modelcheck.numsim import TensorMap, TensorMapError
from tests.manifest import INPUT_BUILDERS, KERNELS


def builder(module: str, name: str):
    spec = importlib.util.spec_from_file_location(f"_inputs_{module}", INPUT_BUILDERS / f"{module}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, name)


def line_of(path, snippet: str) -> int:
    lines = [k + 1 for k, text in enumerate(path.read_text().splitlines()) if snippet in text]
    assert len(lines) == 1, (snippet, lines)
    return lines[0]


TMA_LOAD = 'T.ptx["cp.async.bulk.tensor'


# --------------------------------------------------------------------------- the independent swizzle

def swizzled_offset(offset: int, span: int) -> int:
    """Byte `offset` from a 1024-byte aligned tile start -> where the TMA puts it (PTX swizzle tables):
    the 16-byte chunk j of a 128-byte line sits at position j ^ (line % g) of its group of g chunks,
    g = span / 16 (2 for 32B, 4 for 64B, 8 for 128B); no swizzle keeps it."""
    if span == 0:
        return offset
    group = span // 16
    line, within = divmod(offset, 128)
    chunk, byte = divmod(within, 16)
    first = chunk - chunk % group
    return line * 128 + (first + ((chunk % group) ^ (line % group))) * 16 + byte


def expected_tile_bytes(box: np.ndarray, span: int) -> np.ndarray:
    """The shared tile bytes a TMA load of `box` (rows x elements) leaves, from the swizzle tables."""
    rows = box.view(np.uint8).reshape(box.shape[0], -1)
    out = np.zeros(-(-rows.size // 128) * 128, dtype=np.uint8)      # whole 128-byte lines
    pitch = rows.shape[1]
    for r in range(rows.shape[0]):
        for b in range(pitch):
            out[swizzled_offset(r * pitch + b, span)] = rows[r, b]
    return out[:rows.size] if rows.size % 128 == 0 else out


def test_swizzle_tables_row_example():
    # PTX 128B swizzle table, line 5: positions hold chunks 5 4 7 6 1 0 3 2
    positions = [swizzled_offset(5 * 128 + c * 16, 128) // 16 - 5 * 8 for c in range(8)]
    held = [positions.index(p) for p in range(8)]
    assert held == [5, 4, 7, 6, 1, 0, 3, 2]


def atom32_offset(offset: int) -> int:
    """Byte `offset` from a 1024-byte aligned tile start -> where CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B puts it
    ("swizzles 32-byte chunks within a 128-byte span", CUDA driver API; CuTe Swizzle<2,5,2>): the 32-byte chunk
    j of 128-byte line l sits at position j ^ (l % 4)."""
    line, within = divmod(offset, 128)
    chunk, byte = divmod(within, 32)
    return line * 128 + (chunk ^ (line % 4)) * 32 + byte


def test_atom32_swizzle_moves_32_byte_chunks_with_a_four_line_period():
    # line 3: positions hold chunks 3 2 1 0; line 5 repeats line 1 (1 0 3 2); line 0 is unmoved
    for line, held in [(0, [0, 1, 2, 3]), (3, [3, 2, 1, 0]), (5, [1, 0, 3, 2])]:
        positions = [(atom32_offset(line * 128 + c * 32) - line * 128) // 32 for c in range(4)]
        assert [positions.index(p) for p in range(4)] == held
    from modelcheck.numsim.descriptors import swizzle_atom32, tma_swizzle
    offs = np.arange(4096)
    np.testing.assert_array_equal(swizzle_atom32(offs + 0x2000) - 0x2000, [atom32_offset(int(o)) for o in offs])
    np.testing.assert_array_equal(tma_swizzle(offs + 0x2000, 4), swizzle_atom32(offs + 0x2000))


def test_tma_copy_places_every_byte_as_the_atom32_swizzle_says():
    k, inputs, res, trace = run_copy("tma_copy_128b_atom32b")
    assert res.verdict == "clean" and res.termination == "completed", res.diagnostics
    c = k.constants
    box = box_of(inputs["src"], c["X0"], c["Y0"], c["BOX_X"], c["BOX_Y"])
    rows = box.view(np.uint8).reshape(-1)
    want = np.zeros_like(rows)
    want[[atom32_offset(b) for b in range(rows.size)]] = rows
    got = res.outputs["out"].view(np.uint8)
    np.testing.assert_array_equal(got, want)
    assert not np.array_equal(got, rows)
    assert not np.array_equal(got, expected_tile_bytes(box, 128))     # not the 16-byte-chunk 128B placement


def test_atom32_map_keeps_the_128_byte_span_limit():
    src = np.zeros((8, 64), np.float32)
    with pytest.raises(TensorMapError, match="128-byte span of 128B_atom_32B swizzle"):
        TensorMap(src.reshape(-1), (64, 8), (256,), (64, 8), (1, 1), "float32", "128B_atom_32B")


def run_copy(name: str, **consts):
    k = modelcheck.load(KERNELS / f"{name}.py", **consts)
    inputs = builder("tma", "tma_copy")(k.constants)
    trace = numsim.Trace()
    res = numsim.run(k.func, inputs, observers=[trace])
    return k, inputs, res, trace


def box_of(src: np.ndarray, x0: int, y0: int, bx: int, by: int) -> np.ndarray:
    """The box of `src` at (x0, y0) with zero fill outside."""
    out = np.zeros((by, bx), dtype=src.dtype)
    for r in range(by):
        for c in range(bx):
            y, x = y0 + r, x0 + c
            if 0 <= y < src.shape[0] and 0 <= x < src.shape[1]:
                out[r, c] = src[y, x]
    return out


@pytest.mark.parametrize("name,span", [("tma_copy_none", 0), ("tma_copy_32b", 32), ("tma_copy_64b", 64),
                                       ("tma_copy_128b", 128)])
def test_tma_copy_places_every_byte_as_the_swizzle_tables_say(name, span):
    k, inputs, res, trace = run_copy(name)
    assert res.verdict == "clean" and res.termination == "completed", res.diagnostics
    c = k.constants
    assert c["SWIZZLE"] == span
    box = box_of(inputs["src"], c["X0"], c["Y0"], c["BOX_X"], c["BOX_Y"])
    got = res.outputs["out"].view(np.uint8)
    np.testing.assert_array_equal(got, expected_tile_bytes(box, span))
    if span:   # the swizzle really permutes something
        assert not np.array_equal(got, box.view(np.uint8).reshape(-1))


@pytest.mark.parametrize("name,span", [("tma_copy_32b", 32), ("tma_copy_64b", 64), ("tma_copy_128b", 128)])
def test_tma_copy_zero_fills_out_of_bounds_box_elements(name, span):
    # the box hangs over the left edge (negative x) and the bottom edge of the tensor
    k, inputs, res, _ = run_copy(name, X0=-4, Y0=30)
    assert res.verdict == "clean", res.diagnostics
    c = k.constants
    box = box_of(inputs["src"], -4, 30, c["BOX_X"], c["BOX_Y"])
    assert (box == 0).sum() == 6 * c["BOX_X"] + 10 * 4      # rows 40..45 and columns -4..-1 of rows 30..39
    np.testing.assert_array_equal(res.outputs["out"].view(np.uint8), expected_tile_bytes(box, span))


def test_tma_nan_fill_and_full_box_transaction_bytes():
    k = modelcheck.load(KERNELS / "tma_copy_64b.py", X0=40, Y0=36)
    c = k.constants
    src = np.random.default_rng(3).standard_normal((c["GY"], c["GX"])).astype(np.float32)
    tmap = TensorMap(src.reshape(-1), (c["GX"], c["GY"]), (c["GX"] * 4,), (c["BOX_X"], c["BOX_Y"]), (1, 1),
                     "float32", "64B", oob_fill="nan")
    trace = numsim.Trace()
    res = numsim.run(k.func, {"src": src, "tmap": tmap.numpy(), "out": np.zeros(c["BOX_X"] * c["BOX_Y"],
                                                                                  np.float32)}, observers=[trace])
    assert res.verdict == "clean"
    box = box_of(src, 40, 36, c["BOX_X"], c["BOX_Y"])
    oob = np.ones_like(box, dtype=bool)
    oob[:4, :8] = False                                    # rows 36..39, columns 40..47 are inside
    box[oob] = np.nan
    np.testing.assert_array_equal(res.outputs["out"].view(np.uint8), expected_tile_bytes(box, 64))
    # complete_tx counts the whole box, filled elements included: the expect_tx of NBYTES balances it
    tx = [e for e in trace.sync if e.kind == "mbarrier.complete_tx"]
    assert [e.tx for e in tx] == [c["NBYTES"]] and tx[0].completed


def record_bytes(records, space=None, kind=None) -> set[int]:
    out = set()
    for r in records:
        if (space is None or r.space == space) and (kind is None or r.kind == kind):
            out.update(range(int(r.offsets), int(r.offsets) + r.size))
    return out


def test_tma_access_records_carry_the_exact_swizzled_and_in_bounds_ranges():
    # a 9-row box of 64-byte rows under 128B swizzle: row 8 (line 4, chunks 0-3) lands in chunks 4-7, so
    # the written bytes are not the dense range [0, 576)
    gx, gy = 24, 12
    src = np.arange(gx * gy, dtype=np.float32).reshape(gy, gx)
    tm = TensorMap(src.reshape(-1), (gx, gy), (gx * 4,), (16, 9), (1, 1), "float32", "128B")
    text = RANK_KERNEL.format(n=256, dtype="T.float32", nbytes=16 * 9 * 4, rank=2, coords="12, -3")
    trace = numsim.Trace()
    res = numsim.run(modelcheck.parse(text), {"tmap": tm.numpy(), "out": np.zeros(256, np.float32)},
                     observers=[trace])
    # the copy-out also reads the 64 tile bytes the box skipped: the uninitialized-read advisory says so
    assert res.termination == "completed" and [d.kind for d in res.diagnostics] == ["uninitialized_read"]
    recs = [r for r in trace.accesses if r.actor >= 0]
    assert recs and all(r.proxy == "async" for r in recs)
    assert len({r.actor for r in recs}) == 1
    want = {swizzled_offset(r * 64 + b, 128) for r in range(9) for b in range(64)}
    assert record_bytes(recs, "shared", "write") == want
    assert want != set(range(9 * 64)) and 600 in want and 520 not in want
    # global reads: only in-bounds elements (x 12..23, y 0..5), at their byte offsets in the map's data
    want_g = {(y * gx + x) * 4 + b for y in range(0, 6) for x in range(12, 24) for b in range(4)}
    assert record_bytes(recs, "global", "read") == want_g
    assert {r.alloc_name for r in recs if r.space == "global"} == {"tmap"}
    box = box_of(src, 12, -3, 16, 9)
    np.testing.assert_array_equal(res.outputs["out"].view(np.uint8)[:640][sorted(want)],
                                  expected_tile_bytes(box, 128)[sorted(want)])


def test_tma_records_name_the_bound_buffer_the_map_points_into():
    k, inputs, res, trace = run_copy("tma_copy_128b")
    reads = [r for r in trace.accesses if r.space == "global" and r.actor >= 0]
    assert reads and {r.alloc_name for r in reads} == {"src"}
    c = k.constants
    assert sum(r.size for r in reads) == c["NBYTES"]


def test_tma_store_writes_in_bounds_elements_and_skips_the_rest():
    k = modelcheck.load(KERNELS / "tma_store.py")
    c = k.constants
    inputs = builder("tma", "tma_store")(c)
    trace = numsim.Trace()
    res = numsim.run(k.func, inputs, observers=[trace])
    assert res.verdict == "clean" and res.termination == "completed", res.diagnostics
    want = np.full((c["GY"], c["GX"]), -1.0, np.float32)
    for y in range(c["Y0"], min(c["GY"], c["Y0"] + c["BOX_Y"])):
        for x in range(c["X0"], min(c["GX"], c["X0"] + c["BOX_X"])):
            want[y, x] = y * 1000 + x
    np.testing.assert_array_equal(res.outputs["out"], want)
    np.testing.assert_array_equal(inputs["out"], -1.0)          # the bound input is not mutated
    writes = [r for r in trace.accesses if r.space == "global" and r.kind == "write"]
    assert writes and all(r.proxy == "async" and r.actor >= 0 for r in writes)
    assert len(record_bytes(writes)) == 12 * 24 * 4
    issue = [e for e in trace.sync if e.kind == "async.issue" and e.details.get("kind") == "tma.s2g"]
    done = [e for e in trace.sync if e.kind == "async.complete" and e.details.get("kind") == "tma.s2g"]
    waits = [e for e in trace.sync if e.kind == "bulk.wait_group"]
    assert len(issue) == len(done) == len(waits) == 1
    assert issue[0].seq < done[0].seq < waits[0].seq


def test_tensor_map_only_kernel_reads_its_own_global_snapshot():
    """A map whose base is not a bound buffer gets a global allocation named after the parameter."""
    k = modelcheck.load(KERNELS / "tma_copy_32b.py")
    c = k.constants
    inputs = builder("tma", "tma_copy")(c)
    detached = np.array(inputs["src"], copy=True)               # src binds a different array than the map's
    trace = numsim.Trace()
    res = numsim.run(k.func, {**inputs, "src": detached * 0}, observers=[trace])
    box = box_of(inputs["src"], c["X0"], c["Y0"], c["BOX_X"], c["BOX_Y"])
    np.testing.assert_array_equal(res.outputs["out"].view(np.uint8), expected_tile_bytes(box, 32))
    reads = [r for r in trace.accesses if r.space == "global" and r.actor >= 0]
    assert {r.alloc_name for r in reads} == {"tmap"}


def test_descriptor_that_lost_its_base_uses_its_snapshot():
    """Only the array .numpy() returned (or a .copy() of it) keeps pointer semantics; np.array() of it is a
    plain snapshot, so a TMA store through it does not reach the bound `out`."""
    k = modelcheck.load(KERNELS / "tma_store.py")
    inputs = builder("tma", "tma_store")(k.constants)
    kept = numsim.run(k.func, {**inputs, "tmap": inputs["tmap"].copy()})
    assert (kept.outputs["out"] != -1).any()
    plain = numsim.run(k.func, {**inputs, "tmap": np.array(inputs["tmap"])})
    assert plain.verdict == "clean"
    np.testing.assert_array_equal(plain.outputs["out"], -1.0)


# --------------------------------------------------------------------------- ranks 1..5, element strides

RANK_KERNEL = '''
from tvm_tirx.script import tirx as T

@T.function
def tma_rank(tmap: T.Ptr(T.void), out: T.Tensor(({n},), {dtype})):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 32) as tx:
                bar = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                tile = T.alloc_tensor(ty_args=[T.Tensor(({n},), {dtype}, scope="shared", align=1024)])
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(bar.ptr_to([0]), T.uint32(1))
                    T.ptx.mbarrier.arrive.expect_tx.shared__cta.b64(bar.ptr_to([0]), T.uint32({nbytes}))
                    T.ptx["cp.async.bulk.tensor.{rank}d.shared::cta.global.tile.mbarrier::complete_tx::bytes"](tile.ptr_to([0]), tmap, {coords}, bar.ptr_to([0]))
                T.cuda.mbarrier_wait(bar.ptr_to([0]), 0)
                for k in range({n} // 32):
                    out[k * 32 + tx] = tile[k * 32 + tx]
'''


def reference_box(data, shape, strides_b, box, es, coords, esz):
    """numpy reference of a tile-mode box (dim 0 innermost, element strides above dim 0)."""
    counts = [box[0]] + [math.ceil(b / e) for b, e in zip(box[1:], es[1:])]
    flat = data.reshape(-1).view(np.uint8)
    out = []
    for idx in np.ndindex(*reversed(counts)):
        j = list(reversed(idx))
        x = [coords[i] + j[i] * (1 if i == 0 else es[i]) for i in range(len(shape))]
        if all(0 <= x[i] < shape[i] for i in range(len(shape))):
            off = x[0] * esz + sum(x[i] * strides_b[i - 1] for i in range(1, len(shape)))
            out.append(bytes(flat[off:off + esz]))
        else:
            out.append(bytes(esz))
    return np.frombuffer(b"".join(out), dtype=data.dtype)


@pytest.mark.parametrize("rank,shape,box,es,coords,dtype", [
    (1, (100,), (32,), (1,), (80,), "float32"),
    (3, (8, 5, 7), (8, 4, 3), (1, 2, 3), (0, 1, -2), "bfloat16"),
    (4, (16, 3, 2, 5), (16, 2, 2, 2), (3, 1, 1, 2), (-8, 2, 0, 3), "uint16"),
    (5, (8, 2, 3, 2, 2), (8, 2, 2, 1, 2), (1, 1, 2, 1, 1), (0, 0, 1, 1, -1), "float32"),
])
def test_tma_ranks_element_strides_and_oob(rank, shape, box, es, coords, dtype):
    np_t = numsim.tensormap.np_dtype(dtype)
    esz = np_t.itemsize
    # padded rows: dim-1 stride rounded up to 16 bytes
    pitch = -(-shape[0] * esz // 16) * 16
    strides = [pitch]
    for d in shape[1:-1]:
        strides.append(strides[-1] * d)
    total = strides[-1] * shape[-1] if rank > 1 else shape[0] * esz
    data = (np.arange(total // esz) % 251 + 1).astype(np_t)
    tm = TensorMap(data, shape, strides[:rank - 1], box, es, dtype, "none")
    counts = [box[0]] + [math.ceil(b / e) for b, e in zip(box[1:], es[1:])]
    n = math.prod(counts)
    n32 = -(-n // 32) * 32
    text = RANK_KERNEL.format(n=n32, dtype="T." + dtype, nbytes=n * esz, rank=rank,
                              coords=", ".join(map(str, coords)))
    func = modelcheck.parse(text)
    res = numsim.run(func, {"tmap": tm.numpy(), "out": np.zeros(n32, np_t)})
    # copying out the padding past the box reads never-written tile bytes (an advisory, nothing else)
    assert res.termination == "completed"
    assert [d.kind for d in res.diagnostics] == ([] if n == n32 else ["uninitialized_read"]), res.diagnostics
    want = reference_box(data, shape, strides, box, es, coords, esz)
    np.testing.assert_array_equal(res.outputs["out"][:n].view(np.uint8), want.view(np.uint8))


# --------------------------------------------------------------------------- errors name the field

def base(n=64 * 40):
    return np.zeros(n, dtype=np.float32)


@pytest.mark.parametrize("kwargs,field", [
    (dict(box_shape=(300, 8)), "box_shape[0]"),
    (dict(box_shape=(32, 0)), "box_shape[1]"),
    (dict(box_shape=(6, 8)), "box_shape[0]"),                       # 24 bytes: not a multiple of 16
    (dict(global_strides=(100,)), "global_strides[0]"),
    (dict(global_strides=(256, 16)), "global_strides"),
    (dict(element_strides=(1, 9)), "element_strides[1]"),
    (dict(swizzle="128B", box_shape=(64, 8)), "swizzle"),
    (dict(swizzle="96B"), "swizzle"),
    (dict(global_shape=(64, 41)), "global_shape"),                   # past the end of base
    (dict(global_shape=(64, 40, 1, 1, 1, 1), global_strides=(256,) * 5, box_shape=(8,) * 6,
          element_strides=(1,) * 6), "rank"),
    (dict(dtype="complex64"), "dtype"),
    (dict(oob_fill="nan", dtype="int32"), "oob_fill"),
])
def test_tensor_map_validation_names_the_field(kwargs, field):
    args = dict(base=base(), global_shape=(64, 40), global_strides=(256,), box_shape=(32, 8),
                element_strides=(1, 1), dtype="float32", swizzle="none")
    args.update(kwargs)
    with pytest.raises(TensorMapError) as info:
        TensorMap(**args)
    assert info.value.field == field
    assert field in str(info.value)


def test_tensor_map_base_must_be_16_byte_aligned():
    a = np.zeros(1000, dtype=np.float32)
    with pytest.raises(TensorMapError, match="base") as info:
        TensorMap(a[1:], (64, 10), (256,), (32, 8), (1, 1), "float32")
    assert "16-byte aligned" in info.value.message


def corrupt(desc: np.ndarray, offset: int, fmt: str, value: int) -> np.ndarray:
    out = desc.copy()
    out[offset:offset + struct.calcsize(fmt)] = np.frombuffer(struct.pack(fmt, value), np.uint8)
    return out


@pytest.mark.parametrize("where,fmt,value,field", [
    (116, "<I", 300, "box_shape[1]"),          # box_shape[1] = 300
    (136, "<I", 0, "element_strides[1]"),
    (80, "<Q", 72, "global_strides[0]"),
    (8, "<I", 3, "rank"),                      # a rank-3 map for a 2d copy
    (0, "<Q", 0, "descriptor"),                # not a descriptor at all
])
def test_descriptor_errors_at_the_op_name_the_field_and_the_line(where, fmt, value, field):
    k = modelcheck.load(KERNELS / "tma_copy_128b.py")
    inputs = builder("tma", "tma_copy")(k.constants)
    if field == "rank":
        c = k.constants
        src = inputs["src"]
        inputs["tmap"] = TensorMap(src.reshape(-1), (c["GX"], c["GY"], 1), (c["GX"] * 4, c["GX"] * c["GY"] * 4),
                                   (c["BOX_X"], c["BOX_Y"], 1), (1, 1, 1), "float32", "128B").numpy()
    else:
        inputs["tmap"] = corrupt(inputs["tmap"], where, fmt, value)
    res = numsim.run(k.func, inputs)
    assert res.verdict == "error" and res.termination == "error"
    (d,) = res.diagnostics
    assert d.kind == "invalid_descriptor"
    assert d.details["field"] == field and field in d.message
    assert d.span.line == line_of(KERNELS / "tma_copy_128b.py", TMA_LOAD)


def test_tma_destination_outside_shared_memory_is_oob():
    k = modelcheck.load(KERNELS / "tma_copy_128b.py")
    c = k.constants
    inputs = builder("tma", "tma_copy")(c)
    # a map whose box is twice the tile: the load would run past the shared allocation
    inputs["tmap"] = TensorMap(inputs["src"].reshape(-1), (c["GX"], c["GY"]), (c["GX"] * 4,), (32, 32), (1, 1),
                               "float32", "128B").numpy()
    res = numsim.run(k.func, inputs)
    (d,) = res.diagnostics
    assert d.kind == "oob" and d.span.line == line_of(KERNELS / "tma_copy_128b.py", TMA_LOAD)


def test_a_map_encoded_as_the_driver_does_may_pass_its_base_and_a_tma_past_it_is_oob():
    # cuTensorMapEncodeTiled sees only a pointer: a template wider than its placeholder allocation encodes
    # (within_base=False, as a host prelude's encode), and only a TMA that reaches past the memory is an error
    k = modelcheck.load(KERNELS / "tma_copy_128b.py")
    c = k.constants
    inputs = builder("tma", "tma_copy")(c)
    half = inputs["src"].reshape(-1)[: inputs["src"].size // 2].copy()
    args = (half, (c["GX"], c["GY"]), (c["GX"] * 4,), (c["BOX_X"], c["BOX_Y"]), (1, 1), "float32", "128B")
    with pytest.raises(TensorMapError, match="global_shape"):
        TensorMap(*args)
    inputs["tmap"] = TensorMap(*args, within_base=False).numpy()
    (d,) = numsim.run(k.func, inputs).diagnostics
    assert d.kind == "oob" and d.span.line == line_of(KERNELS / "tma_copy_128b.py", TMA_LOAD)


def test_a_tensor_map_in_global_memory_is_incomplete_not_invalid():
    # PTX allows the tensor-map operand in .global (a patched copy an earlier launch wrote); bytes that hold no
    # map the run knows (the CUtensorMap layout is opaque) make the load unmodeled, naming the op and its line,
    # never an invalid_descriptor (maps held as data: tests/modelcheck/numsim/test_tmap_values.py)
    from pathlib import Path
    path = Path(__file__).parent.parent.parent / "fixtures" / "numsim" / "tma_map_in_global.py"
    report = modelcheck.synccheck(modelcheck.load(path))
    assert report.verdict == "incomplete", report.format()
    assert [f.kind for f in report.findings] == ["analysis_incomplete"]
    message = report.findings[0].message
    assert "cp.async.bulk.tensor.1d" in message and f":{line_of(path, 'T.address_of(maps[0])')}:" in message
    assert "the 128 bytes at maps + 0 hold no tensor map the model knows" in message
