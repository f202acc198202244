"""Cached TMA box plans (`ops/tma_plan.py`) agree with `tensormap.box_plan` element by element, and their word
moves put the same bytes where the element moves do."""
from __future__ import annotations

import numpy as np
import pytest

from modelcheck.numsim.descriptors import byte_runs
from modelcheck.numsim.memory import SHARED_BASE
from modelcheck.numsim.ops import tma_plan
from modelcheck.numsim.tensormap import TensorMapFields, box_plan

# (rank, dtype, swizzle, global shape, box, element strides)
MAPS = [
    (2, "float8_e4m3fn", 3, (256, 96), (128, 32), (1, 1)),
    (2, "bfloat16", 3, (128, 64), (64, 16), (1, 1)),
    (2, "bfloat16", 2, (96, 40), (32, 8), (1, 1)),
    (3, "float32", 1, (16, 24, 5), (8, 4, 2), (1, 1, 1)),
    (2, "int32", 0, (100, 14), (100, 1), (1, 1)),
    (2, "float16", 0, (64, 30), (16, 8), (1, 2)),
    (2, "float4_e2m1fn", 3, (256, 16), (256, 4), (1, 1)),
    (2, "uint16", 0, (6, 9), (3, 3), (1, 1)),        # 6-byte rows: no aligned words
]


def _fields(rank, dtype, swz, shape, box, es):
    esz = {"float8_e4m3fn": 1, "bfloat16": 2, "float16": 2, "float32": 4, "int32": 4, "uint16": 2,
           "float4_e2m1fn": 1}[dtype]
    row = shape[0] // (2 if dtype == "float4_e2m1fn" else 1) * esz
    strides = tuple(row * int(np.prod(shape[1:i])) for i in range(1, rank))
    nbytes = row * int(np.prod(shape[1:]))
    return TensorMapFields(rank, dtype, swz, 0, 0x10000, nbytes, shape, strides, box, es)


def _same(plan, ref):
    assert plan.esz == ref.esz
    assert np.array_equal(plan.inb, ref.inb)
    assert np.array_equal(plan.smem_addr, ref.smem_addr)
    assert np.array_equal(plan.global_off[ref.inb], ref.global_off[ref.inb])


@pytest.mark.parametrize("spec", MAPS)
def test_cached_plans_agree_with_box_plan(spec):
    f = _fields(*spec)
    rng = np.random.default_rng(len(spec[3]) + spec[2])
    step = 2 if f.dtype == "float4_e2m1fn" else 1
    for _ in range(40):
        coords = [int(rng.integers(-3, s + 2)) for s in f.global_shape]
        coords[0] -= coords[0] % step
        dst = SHARED_BASE + 128 * int(rng.integers(0, 64))
        plan, ref = tma_plan.plan_box(f, coords, dst), box_plan(f, coords, dst)
        _same(plan, ref)
        if isinstance(plan, tma_plan.TilePlan):
            assert ref.inb.all()
            assert tma_plan.plan_box(f, list(coords), dst) is plan      # kept per (map, coordinates, destination)
            # the kept runs, translated, are the runs of this box's own offsets (the records TMA makes)
            base_off, alloc_base = 8 * int(rng.integers(0, 9)), SHARED_BASE + 64 * int(rng.integers(0, 4))
            for got, want in ((plan.global_runs(base_off), byte_runs(base_off + ref.global_off, ref.esz)),
                              (plan.smem_runs(alloc_base), byte_runs(ref.smem_addr - alloc_base, ref.esz))):
                assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
            assert (plan.lo_goff, plan.hi_goff) == (int(ref.global_off.min()), int(ref.global_off.max()))
            assert (plan.lo_smem, plan.hi_smem) == (int(ref.smem_addr.min()), int(ref.smem_addr.max()))
        else:
            assert not ref.inb.all()


@pytest.mark.parametrize("spec", MAPS)
def test_word_moves_land_the_element_moves_bytes(spec):
    f = _fields(*spec)
    coords = [0] * f.rank
    dst = SHARED_BASE + 1024
    plan = tma_plan.plan_box(f, coords, dst)
    assert isinstance(plan, tma_plan.TilePlan)
    if f.dtype == "uint16":
        assert plan.words is None       # rows of 6 bytes: elements move one by one
        return
    assert plan.words is not None
    rng = np.random.default_rng(7)
    gdata = rng.integers(0, 256, size=f.base_nbytes, dtype=np.uint8)
    pool, ref = np.zeros(64 * 1024, dtype=np.uint8), np.zeros(64 * 1024, dtype=np.uint8)
    tma_plan.words(pool)[plan.words[1]] = tma_plan.words(gdata)[plan.words[0]]
    goff, soff = plan.global_off, plan.smem_addr - SHARED_BASE
    for k in range(plan.esz):
        ref[soff + k] = gdata[goff + k]
    assert np.array_equal(pool, ref)
