"""The in-kernel tcgen05 descriptor encoders of apache-tvm 0.27, bit for bit (no IR, no engine state).

apache-tvm 0.27 prints them as `T.cuda.tcgen05.encode_matrix_descriptor(desc, addr, ldo, sdo, swizzle)`,
`T.cuda.tcgen05.encode_instr_descriptor(desc, d, a, b, M, N, K, trans_a, trans_b, cta_group, neg_a, neg_b,
sat_d, is_sparse)`, `T.cuda.tcgen05.encode_instr_descriptor_block_scaled(desc, d, a, b, sfa, sfb, sfa_tmem,
sfb_tmem, M, N, K, trans_a, trans_b, cta_group, neg_a, neg_b, is_sparse)` and `T.cuda.runtime_instr_desc(desc,
sf_id)`.  Their device helpers (tvm/backend/cuda/cpp/descriptors.py, bit layouts in codegen/header.py) fill
the PTX descriptor bitfields (PTX ISA 9.7.16.4.1 Table 40 "shared memory descriptor", Tables 42-44
"instruction descriptor"; reference/ptx-encodings.md §4-5):

    smem:  (addr >> 4) & 0x3FFF | (ldo & 0x3FFF) << 16 | (sdo & 0x3FFF) << 32 | 1 << 46 | layout << 61
           (ldo, sdo already in 16-byte units; swizzle 0/1/2/3/4 -> layout 0/6/4/2/1)
    dense: sparse << 2 | sat << 3 | d_fmt << 4 | a_fmt << 7 | b_fmt << 10 | neg_a << 13 | neg_b << 14
           | trans_a << 15 | trans_b << 16 | (N >> 3) << 17 | (M >> 4) << 24
    block-scaled: the same without sat/d_fmt, plus sf_fmt << 23 | (K == 96) << 31 (scale-factor ids 0)
    runtime_instr_desc: (desc & ~0x60000030) | sf_id << 29 | sf_id << 4   (32-bit arithmetic)

TVM checks the arguments when it generates code (dtype kind, shape, transpose and negate rules); a
combination it rejects raises `EncodeError(field, message)` here, naming the field.

The Hopper `T.cuda.wgmma.encode_matrix_descriptor(desc, addr, ldo, sdo, swizzle)` fills the GmmaDescriptor
bitfields of the same helpers (PTX ISA 9.7.15.5.1.2.2 matrix descriptor):

    wgmma: (addr >> 4) & 0x3FFF | (ldo & 0x3FFF) << 16 | (sdo & 0x3FFF) << 32 | layout << 62
           (swizzle 0/1/2/3 -> layout 0/3/2/1; base offset 0)
"""
from __future__ import annotations

from dataclasses import dataclass


class EncodeError(ValueError):
    """An encoder argument TVM's code generator rejects; `field` names it."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


# swizzle enum of the helper -> layout type (bits 61-63)
SWIZZLE_LAYOUT = {0: 0, 1: 6, 2: 4, 3: 2, 4: 1}

# operand / accumulator format codes (the helper's format_map)
FORMAT = {"float16": 0, "bfloat16": 1, "tensor_float32": 2, "tf32": 2, "float8_e4m3fn": 0, "float8_e4m3fnuz": 0,
          "float8_e5m2": 1, "float6_e2m3fn": 3, "float6_e3m2fn": 4, "float4_e2m1fn": 5, "uint8": 0, "int8": 1,
          "float32": 1, "int32": 2}
SF_FORMAT = {"float8_e4m3fn": 0, "float8_e4m3fnuz": 0, "float8_e8m0fnu": 1}

_F8F6F4 = frozenset({"float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float6_e2m3fn", "float6_e3m2fn",
                     "float4_e2m1fn"})
_E4M3 = frozenset({"float8_e4m3fn", "float8_e4m3fnuz"})
# (kind, D types, A types, B types, scale types or None)
_KINDS = (
    ("f16", {"float16"}, {"float16"}, {"float16"}, None),
    ("f16", {"float32"}, {"float16", "bfloat16"}, {"float16", "bfloat16"}, None),
    ("tf32", {"float32"}, {"tensor_float32", "tf32"}, {"tensor_float32", "tf32"}, None),
    ("i8", {"int32"}, {"int8", "uint8"}, {"int8", "uint8"}, None),
    ("f8f6f4", {"float32", "float16"}, _F8F6F4, _F8F6F4, None),
    ("mxf4", {"float32"}, {"float4_e2m1fn"}, {"float4_e2m1fn"}, {"float8_e8m0fnu"}),
    ("mxf4nvf4", {"float32"}, {"float4_e2m1fn"}, {"float4_e2m1fn"}, _E4M3),
    ("mxf8f6f4", {"float32"}, _F8F6F4, _F8F6F4, {"float8_e8m0fnu"}),
)
# (kinds, cta_group, {M: N step}, extra Ns)
_SHAPES: tuple[tuple[set[str], int, dict[int, int], set[int]], ...] = (
    ({"f16", "tf32", "f8f6f4"}, 1, {64: 8, 128: 16}, set()),
    ({"f16", "tf32", "f8f6f4"}, 2, {128: 32, 256: 32}, set()),
    ({"i8"}, 1, {64: 16, 128: 16}, {8, 24}),
    ({"i8"}, 2, {128: 32, 256: 32}, set()),
    ({"mxf8f6f4", "mxf4", "mxf4nvf4"}, 1, {128: 8}, set()),
    ({"mxf8f6f4", "mxf4", "mxf4nvf4"}, 2, {128: 16, 256: 16}, set()),
)
_K = {"f16": (16, 32), "tf32": (8, 16), "f8f6f4": (32, 64), "i8": (32, 64), "mxf8f6f4": (32, 64),
      "mxf4": (64, 128), "mxf4nvf4": (64, 128)}
_TRANS_DENSE = frozenset({"float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "int8", "uint8", "float16", "bfloat16",
                          "tensor_float32", "tf32"})
_TRANS_SCALED = frozenset({"float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2"})


def _kind(d: str, a: str, b: str, sfa: str | None = None, sfb: str | None = None) -> str:
    for kind, ds, as_, bs, sfs in _KINDS:
        if d in ds and a in as_ and b in bs and (sfs is None) == (sfa is None) and \
                (sfs is None or (sfa in sfs and sfb in sfs)):
            return kind
    raise EncodeError("dtype", f"no tcgen05.mma kind multiplies d={d}, a={a}, b={b}"
                      + (f", scale_a={sfa}, scale_b={sfb}" if sfa is not None else ""))


def _check_shape(kind: str, cta_group: int, m: int, n: int, k: int, sparse: bool) -> None:
    if cta_group not in (1, 2):
        raise EncodeError("n_cta_groups", f"cta_group {cta_group} is not 1 or 2")
    rule = next(r for r in _SHAPES if kind in r[0] and r[1] == cta_group)
    steps, extra = rule[2], rule[3]
    if m not in steps:
        raise EncodeError("M", f"M = {m} is not one of {sorted(steps)} for kind::{kind}, cta_group::{cta_group}")
    step = steps[m]
    if n not in extra and not (step <= n <= 256 and n % step == 0):
        raise EncodeError("N", f"N = {n} is not a multiple of {step} in [{step}, 256] for kind::{kind}, M = {m}")
    dense, sparse_k = _K[kind]
    k96 = not sparse and kind in ("mxf4", "mxf4nvf4") and (cta_group, m) in ((1, 128), (2, 256)) and k == 96
    if k != (sparse_k if sparse else dense) and not k96:
        raise EncodeError("K", f"K = {k} is not {sparse_k if sparse else dense} for "
                               f"{'sparse ' if sparse else ''}kind::{kind}")


def _common(m: int, n: int, a_fmt: int, b_fmt: int, trans_a, trans_b, neg_a, neg_b, sparse) -> int:
    return ((int(bool(sparse)) << 2) | (a_fmt & 7) << 7 | (b_fmt & 7) << 10 | int(bool(neg_a)) << 13
            | int(bool(neg_b)) << 14 | int(bool(trans_a)) << 15 | int(bool(trans_b)) << 16
            | ((n >> 3) & 0x3F) << 17 | ((m >> 4) & 0x1F) << 24)


def matrix_descriptor(addr: int, ldo: int, sdo: int, swizzle: int) -> int:
    """The 64-bit shared-memory matrix descriptor of the matrix at shared address `addr`."""
    if int(swizzle) not in SWIZZLE_LAYOUT:
        raise EncodeError("swizzle", f"swizzle {swizzle} is not 0 (none), 1 (32B), 2 (64B), 3 (128B) or "
                                     f"4 (128B with 32B atomicity)")
    return ((int(addr) >> 4) & 0x3FFF | (int(ldo) & 0x3FFF) << 16 | (int(sdo) & 0x3FFF) << 32 | 1 << 46
            | SWIZZLE_LAYOUT[int(swizzle)] << 61)


WGMMA_SWIZZLE_LAYOUT = {0: 0, 1: 3, 2: 2, 3: 1}


def wgmma_matrix_descriptor(addr: int, ldo: int, sdo: int, swizzle: int) -> int:
    """The 64-bit Hopper (wgmma) matrix descriptor of the matrix at shared address `addr`."""
    if int(swizzle) not in WGMMA_SWIZZLE_LAYOUT:
        # TVM's switch has no case for it and would leave the layout at 0 (no swizzle) without a word
        raise EncodeError("swizzle", f"swizzle {swizzle} is not 0 (none), 1 (32B), 2 (64B) or 3 (128B) for wgmma")
    return ((int(addr) >> 4) & 0x3FFF | (int(ldo) & 0x3FFF) << 16 | (int(sdo) & 0x3FFF) << 32
            | WGMMA_SWIZZLE_LAYOUT[int(swizzle)] << 62)


def instr_descriptor(d: str, a: str, b: str, m: int, n: int, k: int, trans_a, trans_b, cta_group: int,
                     neg_a, neg_b, sat_d, sparse) -> int:
    """The 32-bit instruction descriptor of a dense (not block-scaled) tcgen05.mma."""
    kind = _kind(d, a, b)
    if kind not in ("f16", "tf32", "f8f6f4", "i8"):
        raise EncodeError("dtype", f"kind::{kind} needs the block-scaled encoder")
    _check_shape(kind, int(cta_group), int(m), int(n), int(k), bool(sparse))
    if trans_a and a not in _TRANS_DENSE:
        raise EncodeError("trans_a", f"A of type {a} cannot be MN-major")
    if trans_b and b not in _TRANS_DENSE:
        raise EncodeError("trans_b", f"B of type {b} cannot be MN-major")
    if (neg_a or neg_b) and kind not in ("f16", "tf32", "f8f6f4"):
        raise EncodeError("neg_a" if neg_a else "neg_b", f"kind::{kind} cannot negate an operand")
    if sat_d and kind != "i8":
        raise EncodeError("sat_d", f"saturation is for kind::i8 only, not kind::{kind}")
    value = _common(int(m), int(n), FORMAT[a], FORMAT[b], trans_a, trans_b, neg_a, neg_b, sparse)
    return (value | int(bool(sat_d)) << 3 | (FORMAT[d] & 3) << 4) & 0xFFFFFFFF


def instr_descriptor_block_scaled(d: str, a: str, b: str, sfa: str, sfb: str, m: int, n: int, k: int, trans_a,
                                  trans_b, cta_group: int, neg_a, neg_b, sparse) -> int:
    """The 32-bit instruction descriptor of a block-scaled tcgen05.mma (scale-factor ids 0)."""
    kind = _kind(d, a, b, sfa, sfb)
    _check_shape(kind, int(cta_group), int(m), int(n), int(k), bool(sparse))
    if trans_a and a not in _TRANS_SCALED:
        raise EncodeError("trans_a", f"A of type {a} cannot be MN-major in a block-scaled MMA")
    if trans_b and b not in _TRANS_SCALED:
        raise EncodeError("trans_b", f"B of type {b} cannot be MN-major in a block-scaled MMA")
    a_fmt, b_fmt = (FORMAT[a], FORMAT[b]) if kind == "mxf8f6f4" else (1, 1)   # mxf4 kinds: fixed code 1
    value = _common(int(m), int(n), a_fmt, b_fmt, trans_a, trans_b, neg_a, neg_b, sparse)
    return (value | (SF_FORMAT[sfa] & 1) << 23 | int(int(k) == 96) << 31) & 0xFFFFFFFF


def runtime_instr_desc(desc: int, sf_id: int) -> int:
    """TVM's patch of both scale-factor ids (bits 29-30 and 4-5) of a block-scaled descriptor."""
    sf = int(sf_id) & 0xFFFFFFFF
    return ((int(desc) & ~0x60000030) | ((sf << 29) | (sf << 4))) & 0xFFFFFFFF


@dataclass(frozen=True)
class Call:
    """One encoder: its argument names after `desc` (TVM's printed order) and the function of them."""

    name: str
    args: tuple[str, ...]
    bits: int


CALLS = {
    "cuda.tcgen05.encode_matrix_descriptor": Call("encode_matrix_descriptor", ("addr", "ldo", "sdo", "swizzle"), 64),
    "cuda.tcgen05.encode_instr_descriptor": Call(
        "encode_instr_descriptor", ("d_dtype", "a_dtype", "b_dtype", "M", "N", "K", "trans_a", "trans_b",
                                    "n_cta_groups", "neg_a", "neg_b", "sat_d", "is_sparse"), 32),
    "cuda.tcgen05.encode_instr_descriptor_block_scaled": Call(
        "encode_instr_descriptor_block_scaled", ("d_dtype", "a_dtype", "b_dtype", "sfa_dtype", "sfb_dtype",
                                                 "sfa_tmem_addr", "sfb_tmem_addr", "M", "N", "K", "trans_a",
                                                 "trans_b", "n_cta_groups", "neg_a", "neg_b", "is_sparse"), 32),
    "cuda.runtime_instr_desc": Call("runtime_instr_desc", ("sf_id",), 32),
    "cuda.wgmma.encode_matrix_descriptor": Call("wgmma_encode_matrix_descriptor", ("addr", "ldo", "sdo", "swizzle"),
                                                64),
}


def encode(op: str, args: dict, old: int = 0) -> int:
    """The descriptor value `op` writes, from its arguments by name (`old`: the value it patches)."""
    if op == "cuda.tcgen05.encode_matrix_descriptor":
        return matrix_descriptor(args["addr"], args["ldo"], args["sdo"], args["swizzle"])
    if op == "cuda.tcgen05.encode_instr_descriptor":
        return instr_descriptor(args["d_dtype"], args["a_dtype"], args["b_dtype"], args["M"], args["N"], args["K"],
                                args["trans_a"], args["trans_b"], args["n_cta_groups"], args["neg_a"],
                                args["neg_b"], args["sat_d"], args["is_sparse"])
    if op == "cuda.tcgen05.encode_instr_descriptor_block_scaled":   # the TMEM addresses do not enter the bits
        return instr_descriptor_block_scaled(args["d_dtype"], args["a_dtype"], args["b_dtype"], args["sfa_dtype"],
                                             args["sfb_dtype"], args["M"], args["N"], args["K"], args["trans_a"],
                                             args["trans_b"], args["n_cta_groups"], args["neg_a"], args["neg_b"],
                                             args["is_sparse"])
    if op == "cuda.wgmma.encode_matrix_descriptor":
        return wgmma_matrix_descriptor(args["addr"], args["ldo"], args["sdo"], args["swizzle"])
    if op == "cuda.runtime_instr_desc":
        return runtime_instr_desc(old, args["sf_id"])
    raise KeyError(op)
