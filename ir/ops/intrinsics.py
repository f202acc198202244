"""`cuda.*` and `tir.*` intrinsics: arity, operands, result dtype."""
from __future__ import annotations

from dataclasses import dataclass

from .base import OperandSpec, _ops

@dataclass(frozen=True, slots=True)
class _Intrinsic:
    name: str
    family: str
    arity: tuple[int, ...]
    operands: tuple[OperandSpec, ...] = ()
    effects: frozenset[str] = frozenset()
    result: str | None = None
    supported: bool = True
    why: str = ""


def _intr(name, family, arity, operands=(), effects=(), result=None, supported=True, why=""):
    return _Intrinsic(name, family, tuple(arity), _ops(*operands), frozenset(effects), result, supported, why)


_ADDR = ("addr", "addr")
_INTRINSICS: dict[str, _Intrinsic] = {i.name: i for i in [
    _intr("cuda.mbarrier_wait", "mbarrier", (2,), (_ADDR, ("parity", "value")), {"sync"}),
    _intr("cuda.mbarrier_wait_acquire_cluster", "mbarrier", (2,), (_ADDR, ("parity", "value")), {"sync"}),
    _intr("cuda.cta_sync", "named_barrier", (0,), (), {"sync"}),
    _intr("cuda.warpgroup_sync", "named_barrier", (1,), (("barrier_id", "value"),), {"sync"}),
    _intr("cuda.warp_sync", "warp", (0, 1), (("membermask", "value"),), {"sync", "collective"}),
    _intr("cuda.cluster_sync", "cluster_barrier", (0,), (), {"sync"}),
    _intr("cuda.grid_sync", "named_barrier", (0,), (), {"sync"}, supported=False, why="grid sync is not modeled"),
    _intr("tir.tvm_storage_sync", "named_barrier", (1, 3),
          (("scope", "imm"), ("barrier_id", "value"), ("thread_count", "value")), {"sync"}),
    _intr("cuda.thread_fence", "fence", (0,), (), {"sync"}),
    _intr("cuda.elect_sync", "warp", (0, 1), (("membermask", "value"),), {"sync", "collective"}, result="uint32"),
    _intr("cuda.__shfl_sync", "warp", (3, 4), (("membermask", "value"), ("value", "value"), ("src_lane", "value"),
                                               ("width", "value")), {"sync", "collective"}, result="arg1"),
    _intr("cuda.__shfl_xor_sync", "warp", (3, 4), (("membermask", "value"), ("value", "value"),
                                                   ("lane_mask", "value"), ("width", "value")),
          {"sync", "collective"}, result="arg1"),
    _intr("cuda.__shfl_up_sync", "warp", (3, 4), (("membermask", "value"), ("value", "value"), ("delta", "value"),
                                                  ("width", "value")), {"sync", "collective"}, result="arg1"),
    _intr("cuda.__shfl_down_sync", "warp", (3, 4), (("membermask", "value"), ("value", "value"),
                                                    ("delta", "value"), ("width", "value")),
          {"sync", "collective"}, result="arg1"),
    _intr("tir.gpu_warp_shuffle", "warp", (5,), (("membermask", "value"), ("value", "value"), ("src_lane", "value"),
                                                 ("width", "value"), ("warp_size", "value")),
          {"sync", "collective"}, result="arg1"),
    _intr("cuda.warp_reduce", "warp", (3,), (("value", "value"), ("op", "imm"), ("width", "value")),
          {"sync", "collective"}, result="arg0"),
    _intr("cuda.ballot_sync", "warp", (2,), (("membermask", "value"), ("predicate", "value")),
          {"sync", "collective"}, result="uint32"),
    _intr("cuda.any_sync", "warp", (2,), (("membermask", "value"), ("predicate", "value")),
          {"sync", "collective"}, result="int32"),   # TVM types it int32 (ballot_sync is uint32)
    _intr("cuda.atomic_add", "memory", (2,), (_ADDR, ("value", "value")), {"reads", "writes"}, result="arg1"),
    _intr("cuda.atomic_cas", "memory", (3,), (_ADDR, ("compare", "value"), ("value", "value")),
          {"reads", "writes"}, result="arg2"),
    _intr("cuda.nano_sleep", "misc", (1,), (("ns", "value"),)),
    _intr("cuda.clock64", "misc", (0,), (), result="uint64"),   # TVM types it uint64
    _intr("cuda.printf", "misc", tuple(range(0, 33)), ()),
    _intr("cuda.lane_id", "index", (0,), (), result="int32"),
    _intr("cuda.warp_id", "index", (0,), (), result="int32"),
    _intr("cuda.thread_rank", "index", (0,), (), result="int32"),
    _intr("cuda.warpgroup_id", "index", (0,), (), result="int32"),
    _intr("cuda.warp_in_warpgroup", "index", (0,), (), result="int32"),
    _intr("cuda.thread_in_warpgroup", "index", (0,), (), result="int32"),
    _intr("cuda.cvta_generic_to_shared", "index", (1,), (("addr", "value"),), result="uint32"),
    _intr("cuda.__activemask", "warp", (0,), (), result="uint32"),
    # TMEM address arithmetic (TVM's get_tmem_addr): row in bits 16-31, column in bits 0-15, each wrapping
    _intr("cuda.get_tmem_addr", "index", (3,), (("taddr", "value"), ("row_offset", "value"), ("col_offset", "value")),
          result="uint32"),
    # a special register by name (`T.cuda.mov_sreg(32, "cluster_ctarank")`)
    _intr("cuda.mov_sreg", "index", (2,), (("bits", "imm"), ("name", "imm")), result="uint32"),
    # profiler range markers (no effect on the kernel's values or ordering)
    _intr("cuda.iket.mark", "misc", (1,), (("label", "imm"),)),
    _intr("cuda.iket.range_start", "misc", (1,), (("label", "imm"),), result="uint32"),
    _intr("cuda.iket.range_end", "misc", (1,), (("handle", "value"),)),
    # float2 values ride a uint64 (x in the low 32 bits, as TVM's helpers reinterpret them); NumSim's
    # ops/ptx_math.py models these
    _intr("cuda.make_float2", "math", (2,), (("x", "value", "float32"), ("y", "value", "float32")), result="uint64"),
    _intr("cuda.float2_x", "math", (1,), (("packed", "value", "uint64"),), result="float32"),
    _intr("cuda.float2_y", "math", (1,), (("packed", "value", "uint64"),), result="float32"),
    _intr("cuda.float_as_uint", "math", (1,), (("x", "value", "float32"),), result="uint32"),
    _intr("cuda.uint_as_float", "math", (1,), (("bits", "value", "uint32"),), result="float32"),
    _intr("cuda.fdividef", "math", (2,), (("x", "value", "float32"), ("y", "value", "float32")), result="float32"),
    _intr("cuda.float22bfloat162_rn", "math", (2,), (("x", "value", "float32"), ("y", "value", "float32")),
          result="uint32"),
    # TVM's `*(half2*)dst = __float22half2_rn(*(float2*)src)` on register addresses (NumSim: ops/misc.py)
    _intr("cuda.float22half2", "math", (2,), (("dst", "addr"), ("src", "addr"))),
    # TVM 0.27: "a no-op NVIDIA IKET range token for warp-uniform control flow" (a profiler annotation)
    _intr("cuda.iket.sentinel_token", "misc", (1,), (("label", "imm"),), result="uint32"),
    # TVM 0.27's device helper: `if (!(cond)) asm("trap;")`, per thread
    _intr("cuda.trap_when_assert_failed", "misc", (1,), (("condition", "value"),)),
    # TVM 0.27's declared spin on a global word: `do dst = ld.relaxed.scope(ptr) while (!condition)`, then one
    # ld.acquire.scope of the word (the condition reads `dst`)
    _intr("cuda.wait_until", "memory", (3, 4, 5, 6, 7), (("dst", "dst"), ("ptr", "addr"), ("condition", "value"),
                                              ("scope", "imm"), ("space", "imm"), ("ptx_type", "imm"),
                                              ("backoff_ns", "value")), {"reads", "sync"}),
    # TVM's builtin tvm_warp_activemask (lowered to __activemask()): the warp's active lanes
    _intr("tir.tvm_warp_activemask", "warp", (0,), (), result="uint32"),
    # in-kernel tcgen05 descriptor encoders (apache-tvm 0.27): the descriptor is written through the pointer
    _intr("cuda.runtime_instr_desc", "tcgen05", (2,), (("desc", "addr"), ("sf_id", "value")), {"reads", "writes"}),
    _intr("cuda.tcgen05.encode_instr_descriptor_block_scaled", "tcgen05", (17,),
          (("desc", "addr"), *[(f, "imm") for f in ("d_dtype", "a_dtype", "b_dtype", "sfa_dtype", "sfb_dtype")],
           ("sfa_tmem_addr", "value"), ("sfb_tmem_addr", "value"),
           *[(f, "value") for f in ("M", "N", "K", "trans_a", "trans_b", "n_cta_groups", "neg_a", "neg_b",
                                    "is_sparse")]), {"writes"}),
    _intr("cuda.tcgen05.encode_instr_descriptor", "tcgen05", (14,),
          (("desc", "addr"), *[(f, "imm") for f in ("d_dtype", "a_dtype", "b_dtype")],
           *[(f, "value") for f in ("M", "N", "K", "trans_a", "trans_b", "n_cta_groups", "neg_a", "neg_b", "sat_d",
                                    "is_sparse")]), {"writes"}),
    _intr("cuda.tcgen05.encode_matrix_descriptor", "tcgen05", (5,),
          (("desc", "addr"), ("addr", "addr"), ("ldo", "value"), ("sdo", "value"), ("swizzle", "value")),
          {"writes"}),
    # the Hopper wgmma matrix descriptor encoder (apache-tvm-tirx / apache-tvm 0.27 `T.cuda.wgmma`)
    _intr("cuda.wgmma.encode_matrix_descriptor", "wgmma", (5,),
          (("desc", "addr"), ("addr", "addr"), ("ldo", "value"), ("sdo", "value"), ("swizzle", "value")),
          {"writes"}),
    _intr("tir.reinterpret", "math", (2,), (("dtype", "imm"), ("value", "value")), result="arg0"),
    # TVM's builtin::isnullptr: `x == NULL` of a handle (CUDA codegen prints the comparison)
    _intr("tir.isnullptr", "math", (1,), (("x", "value"),), result="bool"),
    # `T.ptr_byte_offset(ptr, bytes, dtype)`: the pointer `bytes` further (the dtype only types the result)
    _intr("tir.ptr_byte_offset", "math", (2,), (("ptr", "value"), ("bytes", "value")), result="handle"),
    *[_intr(f"tir.{m}", "math", (1,), (("x", "value"),), result="arg0")
      for m in ("exp", "exp2", "exp10", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan",
                "tanh", "sigmoid", "fabs", "floor", "ceil", "round", "trunc", "nearbyint", "erf", "atan", "asin",
                "acos", "sinh", "cosh")],
    *[_intr(f"tir.{m}", "math", (1,), (("x", "value"),), result="bool") for m in ("isnan", "isinf", "isfinite")],
    # bit counts of an integer (TVM's tirx.popcount keeps x's type; prim.clz is int32; CUDA __popc / __clz)
    _intr("tir.popcount", "math", (1,), (("x", "value"),), result="arg0"),
    _intr("tir.clz", "math", (1,), (("x", "value"),), result="int32"),
    *[_intr(f"tir.{m}", "math", (2,), (("x", "value"), ("y", "value")), result="arg0")
      for m in ("pow", "fmod", "atan2", "copysign", "hypot")],
]}

# `T.cuda.warp_sum(x)` prints as `T.cuda.warp_reduce(x, "sum", 32)`; the builder rewrites these.
WARP_REDUCE_ALIASES = {"cuda.warp_sum": "sum", "cuda.warp_max": "max", "cuda.warp_min": "min"}

# intrinsics TVM's parser takes by keyword after `desc` (printed positionally): field names and Python defaults
KEYWORD_INTRINSICS: dict[str, tuple[tuple[str, ...], dict[str, int | bool]]] = {
    name: (tuple(o.name for o in _INTRINSICS[name].operands),
           {"n_cta_groups": 1, "neg_a": False, "neg_b": False, "sat_d": False, "is_sparse": False})
    for name in ("cuda.tcgen05.encode_instr_descriptor", "cuda.tcgen05.encode_instr_descriptor_block_scaled")}
