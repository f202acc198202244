"""The capture's stand-ins (benchmarks/corpus/standins.py): reference values that never become data, the CUDA
driver's tensor-map encode as a recorder, CUDA-aligned CPU storage."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

from benchmarks.corpus import standins
from benchmarks.corpus.standins import ReferenceUnavailable, StandIn


def test_stand_in_unpacks_into_as_many_values_as_the_statement_names():
    ref = standins.stand_in_module("flashinfer", None)
    out, lse = ref.attention(1, 2)
    first, *rest, last = ref.plan()
    assert all(isinstance(v, StandIn) for v in (out, lse, first, last)) and rest == []
    assert list(ref.anything) == []            # a loop over a stand-in sees nothing


def test_stand_in_is_never_a_number():
    ref = standins.stand_in_module("deep_gemm", None)
    with pytest.raises(ReferenceUnavailable, match="deep_gemm.fp8_gemm"):
        int(ref.fp8_gemm(3))
    with pytest.raises(ReferenceUnavailable):
        range(ref.size)
    assert isinstance(ref.x + 1, StandIn) and isinstance(2 * ref.x, StandIn)


def test_stand_in_module_has_a_file_and_dunders_stay_absent():
    mod = standins.stand_in_module("flashinfer", None)
    assert "flashinfer" in mod.__file__
    with pytest.raises(AttributeError):
        mod.__wrapped__    # noqa: B018 -- introspection must not see a stand-in


def test_stand_in_as_a_base_class_gives_a_plain_class():
    ref = standins.stand_in_module("cutlass", None)

    class Kernel(ref.Base):   # type: ignore[misc,name-defined]
        pass

    assert Kernel.__mro__[-1] is object


def test_cuda_python_encode_is_recorded_and_its_descriptor_names_it():
    calls: list = []
    drv = standins.driver_module("cuda.bindings.driver", None, calls)
    (ok,) = drv.cuInit(0)
    assert ok == drv.CUresult.CUDA_SUCCESS
    result, tmap = drv.cuTensorMapEncodeTiled(
        drv.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, 0x1000,
        [drv.cuuint64_t(64), drv.cuuint64_t(32)], [drv.cuuint64_t(128)], [drv.cuuint32_t(64), drv.cuuint32_t(8)],
        [drv.cuuint32_t(1)] * 2, drv.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
        drv.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B, drv.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_NONE,
        drv.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
    assert result == drv.CUresult.CUDA_SUCCESS
    rec = calls[0]
    assert (rec["dtype"], rec["dims"], rec["strides"], rec["box"], rec["swizzle"], rec["data"]) == \
        ("bfloat16", [64, 32], [128], [64, 8], 3, 0x1000)
    # the library copies the descriptor words into a tensor it passes to the kernel: they name the encode
    words = np.array([0, 0, *tmap.opaque], dtype=np.uint64).view(np.int64)
    assert standins.descriptor_serials(words) == [(16, 0)]


def test_ctypes_libcuda_encode_writes_the_descriptor_into_the_callers_buffer():
    calls: list = []
    drv = standins.CtypesDriver(calls)
    assert drv.cuInit(0) == 0
    buf = ctypes.create_string_buffer(256)
    desc = ctypes.c_void_p((ctypes.addressof(buf) + 127) & ~127)
    dims = (ctypes.c_uint64 * 1)(256)
    box = (ctypes.c_uint32 * 1)(32)
    assert drv.cuTensorMapEncodeTiled(desc, 0, 1, 0x2000, dims, (ctypes.c_uint64 * 1)(), box,
                                      (ctypes.c_uint32 * 1)(1), 0, 0, 0, 0) == 0
    assert calls[0]["descriptor"] == desc.value and calls[0]["dims"] == [256] and calls[0]["dtype"] == "uint8"
    raw = np.frombuffer(ctypes.string_at(desc.value, 128), np.uint8)
    assert standins.descriptor_serials(raw) == [(0, 0)]
    with pytest.raises(ReferenceUnavailable, match="cuMemAlloc"):
        drv.cuMemAlloc   # noqa: B018


def test_aligned_copy_keeps_values_and_view_geometry():
    torch = pytest.importorskip("torch")
    base = torch.arange(40, dtype=torch.float32)
    t = base[3:].view(37)[::2]
    out = standins.aligned_copy(t)
    assert out.untyped_storage().data_ptr() % standins.CUDA_ALIGN == 0
    assert out.stride() == t.stride() and out.storage_offset() == t.storage_offset()
    assert torch.equal(out, t)


def test_taint_follows_storage_not_the_view():
    torch = pytest.importorskip("torch")
    taint = standins.Taint()
    buf = torch.zeros(8)
    taint.mark(buf[2:4], "flashinfer.quantize(...)")
    assert taint.of(buf) == "flashinfer.quantize(...)" and taint.of(torch.zeros(2)) is None
