"""Bit-exact decoders and address maps for Blackwell descriptors (no IR, no engine state).

Facts from `reference/ptx-encodings.md`:
- TMEM addresses: `lane << 16 | column` (§1).
- tcgen05.ld/st register <-> (lane, column) maps for the 32x32b and 16x* shapes (§3).
- The 64-bit UMMA shared-memory matrix descriptor and the byte address of element
  (row, k) of the canonical K-major / MN-major layouts, swizzled on the absolute
  address (§4).
- The 32-bit instruction descriptor of `kind::f16` / `kind::tf32` (§5).
- tcgen05.cp source rows -> TMEM lanes (§7).
- The TMA / UMMA swizzle XOR `addr ^ (((addr >> 7) & mask) << 4)` (§4.1, §8.3), and the 32-byte-atom
  128B swizzle `addr ^ ((addr & 0x180) >> 2)` (UMMA layout type 1, TMA swizzle code 4).

Decoders raise `DescriptorError(field, message)` for a field the hardware rejects and
`DescriptorUnsupported(field, message)` for a valid encoding whose meaning the cited
sources leave open (the op turns it into `UnsupportedTIRxError`, never a guess).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


class DescriptorError(ValueError):
    """A descriptor field holds a value the hardware rejects; `field` names it."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class DescriptorUnsupported(DescriptorError):
    """A valid encoding whose behaviour the cited sources do not specify (modeled as unsupported)."""


# --------------------------------------------------------------------------- swizzle

def swizzle(addr, mask: int):
    """The 16-byte-chunk XOR swizzle on absolute shared addresses: bits [4,7) ^= bits [7,10) & mask.
    mask 0 = none, 1 = 32B, 3 = 64B, 7 = 128B (ptx-encodings §8.3; CuTe Swizzle<B,4,3>)."""
    if not mask:
        return addr
    return addr ^ (((addr >> 7) & mask) << 4)


def swizzle_atom32(addr):
    """The 32-byte-atom 128B swizzle, CuTe `Swizzle<2,5,2>`: bits [5,7) ^= bits [7,9) -- the four 32-byte chunks
    of a 128-byte row permuted by the row's index mod 4 (a 512-byte period).  Both the UMMA layout type 1
    ("128B swizzle with 32B atomicity", ptx-encodings §4.1) and CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B ("swizzles
    32-byte chunks within a 128-byte span", CUDA driver API CUtensorMapSwizzle; CUTLASS maps Swizzle<2,5,2> to
    that mode: cute/atom/copy_traits_sm90_tma_swizzle.hpp get_tma_swizzle_base: M = 5 -> SWIZZLE_BASE_32B) apply it."""
    return addr ^ ((addr & 0x180) >> 2)


TMA_SWIZZLE_MASK = {0: 0, 1: 1, 2: 3, 3: 7}     # CUtensorMapSwizzle NONE/32B/64B/128B as `swizzle` masks


def tma_swizzle(addr, code: int):
    """The shared address a TMA box byte at unswizzled absolute address `addr` lands at under CUtensorMapSwizzle
    `code` (0-3 the 16-byte-chunk modes, 4 CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B)."""
    if code == 4:
        return swizzle_atom32(addr)
    return swizzle(addr, TMA_SWIZZLE_MASK[code])


# --------------------------------------------------------------------------- TMEM addresses

TMEM_LANES = 128
TMEM_COLUMNS = 512


def tmem_split(addr: int) -> tuple[int, int]:
    """(lane, column) of a 32-bit TMEM address."""
    addr = int(addr) & 0xFFFFFFFF
    return addr >> 16, addr & 0xFFFF


# --------------------------------------------------------------------------- UMMA smem descriptor

LAYOUT_NONE, LAYOUT_128B_BASE32B, LAYOUT_128B, LAYOUT_64B, LAYOUT_32B = 0, 1, 2, 4, 6
LAYOUT_NAMES = {0: "no swizzle", 1: "128B swizzle with 32B atomicity", 2: "128B swizzle", 4: "64B swizzle",
                6: "32B swizzle"}
LAYOUT_SPAN = {0: 0, 2: 128, 4: 64, 6: 32}          # swizzle span S in bytes
LAYOUT_MASK = {0: 0, 2: 7, 4: 3, 6: 1}              # XOR mask of `swizzle`


def _enc14(x: int) -> int:
    return (int(x) & 0x3FFFF) >> 4


@dataclass(frozen=True)
class SmemDescriptor:
    """The 64-bit shared-memory matrix descriptor (PTX Table 40); byte values, not encoded fields."""

    start: int          # matrix start address (bytes, 16-byte granule)
    lbo: int            # leading-dimension byte offset
    sbo: int            # stride-dimension byte offset
    version: int        # bits 46-48, must be 0b001
    base_offset: int    # bits 49-51
    lbo_mode: int       # bit 52 (1 = absolute LBO: sm_103a only)
    layout: int         # bits 61-63
    reserved: int       # bits 14-15, 30-31, 53-60 (must be 0)

    @staticmethod
    def decode(value: int) -> "SmemDescriptor":
        v = int(value) & 0xFFFF_FFFF_FFFF_FFFF
        reserved = (v >> 14) & 3 | ((v >> 30) & 3) << 2 | ((v >> 53) & 0xFF) << 4
        return SmemDescriptor(start=(v & 0x3FFF) << 4, lbo=((v >> 16) & 0x3FFF) << 4, sbo=((v >> 32) & 0x3FFF) << 4,
                              version=(v >> 46) & 7, base_offset=(v >> 49) & 7, lbo_mode=(v >> 52) & 1,
                              layout=(v >> 61) & 7, reserved=reserved)

    @staticmethod
    def encode(start: int, lbo: int, sbo: int, layout: int, version: int = 1, base_offset: int = 0,
               lbo_mode: int = 0) -> int:
        return (_enc14(start) | _enc14(lbo) << 16 | _enc14(sbo) << 32 | (version & 7) << 46
                | (base_offset & 7) << 49 | (lbo_mode & 1) << 52 | (layout & 7) << 61)

    def validate(self) -> None:
        if self.version != 1:
            raise DescriptorError("version", f"bits 46-48 hold {self.version:#05b}; the sm_100 descriptor needs "
                                             f"the fixed constant 0b001")
        if self.lbo_mode:
            raise DescriptorError("lbo_mode", "bit 52 (absolute LBO address) is set; sm_100a only has relative "
                                              "leading byte offsets (clear the bit)")
        if self.layout not in LAYOUT_NAMES:
            raise DescriptorError("layout", f"swizzle/layout type {self.layout} (bits 61-63) is invalid; use 0 none, "
                                            f"1 128B-base-32B, 2 128B, 4 64B or 6 32B")
        if self.reserved:
            raise DescriptorError("reserved", "reserved bits (14-15, 30-31 or 53-60) are not zero")
        if self.base_offset:
            raise DescriptorUnsupported("base_offset", f"matrix base offset {self.base_offset} is not modeled "
                                                       f"(start swizzled tiles on their repeat boundary instead)")


def matrix_addresses(desc: SmemDescriptor, rows: int, k: int, esz: int, mn_major: bool) -> np.ndarray:
    """Absolute shared byte address of element (row, k) of a canonical layout, shape (rows, k), int64.

    `row` is the M (A) or N (B) index, `k` the K index, `esz` the element size in bytes.  Readable
    form (ptx-encodings §4.3, S = swizzle span, n = S/16, byte offsets mn = row*esz, kb = k*esz):
        K-major,  none: start + (row%8)*16 + (row//8)*SBO + kb%16 + (kb//16)*LBO
        K-major,  S   : start + (row%8)*S  + (row//8)*SBO + kb
        MN-major, none: start + mn%16 + (mn//16)*SBO + (k%8)*16 + (k//8)*LBO
        MN-major, S   : start + mn%16 + ((mn//16)%n)*16 + (mn//S)*LBO + (k%8)*S + (k//8)*SBO
    then the layout's swizzle on the absolute address."""
    desc.validate()
    r = np.arange(rows, dtype=np.int64)[:, None]
    kk = np.arange(k, dtype=np.int64)[None, :]
    if desc.layout == LAYOUT_128B_BASE32B:
        return _base32b_addresses(desc, r, kk, esz, mn_major)
    span = LAYOUT_SPAN[desc.layout]
    if not mn_major:
        kb = kk * esz
        if span == 0:
            addr = desc.start + (r % 8) * 16 + (r // 8) * desc.sbo + kb % 16 + (kb // 16) * desc.lbo
        else:
            addr = desc.start + (r % 8) * span + (r // 8) * desc.sbo + kb
    else:
        mn = r * esz
        if span == 0:
            addr = desc.start + mn % 16 + (mn // 16) * desc.sbo + (kk % 8) * 16 + (kk // 8) * desc.lbo
        else:
            n = span // 16
            addr = (desc.start + mn % 16 + ((mn // 16) % n) * 16 + (mn // span) * desc.lbo + (kk % 8) * span
                    + (kk // 8) * desc.sbo)
    return swizzle(addr, LAYOUT_MASK[desc.layout])


def _base32b_addresses(desc: SmemDescriptor, r, kk, esz: int, mn_major: bool) -> np.ndarray:
    """Layout type 1, MN-major only: CUTLASS `make_umma_desc` (cute/atom/mma_traits_sm100.hpp) takes the canonical
    form, in 16-byte units, `Swizzle<2,5,2> o ((8,n),(4,k)):((1,LBO),(8,SBO))` -- it asserts the 4-K-row atom's row
    stride equals the 8-chunk (128-byte) MN extent, `Layout_MN_SW128_32B_Atom` = 4 K-rows x 128 bytes -- so
        start + mn%128 + (mn//128)*LBO + (k%4)*128 + (k//4)*SBO,  mn = row*esz,
    then Swizzle<2,5,2> on the absolute address.  K-major is rejected there ("invalid for Major-K")."""
    if not mn_major:
        raise DescriptorUnsupported("layout", "the 128B swizzle with 32B atomicity (type 1) is MN-major only in the "
                                              "cited sources; a K-major operand in it is not modeled")
    mn = r * esz
    addr = desc.start + mn % 128 + (mn // 128) * desc.lbo + (kk % 4) * 128 + (kk // 4) * desc.sbo
    return swizzle_atom32(addr)


# --------------------------------------------------------------------------- wgmma smem descriptor

# PTX ISA 9.7.15.5.1.2.2 (Hopper matrix descriptor): start 0-13, LBO 16-29, SBO 32-45 (all >> 4), base
# offset 49-51, swizzle mode 62-63 (0 none, 1 128B, 2 64B, 3 32B); the other bits are unused.  The
# canonical layouts are those of the UMMA descriptor (PTX 9.7.15.5.1.2.1.3), so a decoded wgmma
# descriptor is handed to `matrix_addresses` as the UMMA descriptor of the same layout.
WGMMA_LAYOUT = {0: LAYOUT_NONE, 1: LAYOUT_128B, 2: LAYOUT_64B, 3: LAYOUT_32B}
_WGMMA_UNUSED = (3 << 14) | (3 << 30) | (7 << 46) | (0x3FF << 52)


def wgmma_descriptor(value: int) -> SmemDescriptor:
    """The UMMA-equivalent of a 64-bit wgmma matrix descriptor; `DescriptorError` for a field set where
    the Hopper format has none (a tcgen05 descriptor's version bits 46-48 or 3-bit layout at 61-63 land
    there), `DescriptorUnsupported` for a base offset."""
    v = int(value) & 0xFFFF_FFFF_FFFF_FFFF
    if v & _WGMMA_UNUSED:
        hint = " (bits 46-48 = 1 is the tcgen05 descriptor's version: wgmma has none)" if (v >> 46) & 7 else ""
        raise DescriptorError("reserved", f"unused bits (14-15, 30-31, 46-48 or 52-61) are not zero{hint}")
    base_offset = (v >> 49) & 7
    if base_offset:
        raise DescriptorUnsupported("base_offset", f"matrix base offset {base_offset} is not modeled "
                                                   f"(start swizzled tiles on their repeat boundary instead)")
    return SmemDescriptor(start=(v & 0x3FFF) << 4, lbo=((v >> 16) & 0x3FFF) << 4, sbo=((v >> 32) & 0x3FFF) << 4,
                          version=1, base_offset=0, lbo_mode=0, layout=WGMMA_LAYOUT[(v >> 62) & 3], reserved=0)


def wgmma_fragment(warp: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Rows and columns of the m64nNk16 register fragments held by warp `warp` (0-3) of the warpgroup (PTX
    ISA 9.7.15.5.1.1.1, Figures 148-149; g = lane / 4, t = lane % 4):
        A register j (two 16-bit elements, low first): A[16 warp + g + 8 (j % 2)][2 t + 8 (j // 2) + {0, 1}]
        D register i: D[16 warp + g + 8 ((i // 2) % 2)][8 (i // 4) + 2 t + i % 2]
    Returns (a_rows, a_cols) of shape (4, 32) (the low element's column) and, per D register i modulo 4,
    (d_rows, d_cols0) of shape (4, 32) (add 8 (i // 4) to the column)."""
    lane = np.arange(32)
    g, t = lane // 4, lane % 4
    j = np.arange(4)[:, None]
    a_rows = 16 * warp + g[None, :] + 8 * (j % 2)
    a_cols = 2 * t[None, :] + 8 * (j // 2)
    d_rows = 16 * warp + g[None, :] + 8 * ((j // 2) % 2)
    d_cols = 2 * t[None, :] + j % 2
    return a_rows, a_cols, d_rows, d_cols


# --------------------------------------------------------------------------- instruction descriptor

F16_TYPES = {0: "float16", 1: "bfloat16"}
TF32_TYPE = 2
D_TYPES = {0: "float16", 1: "float32"}
# kind::f8f6f4 / kind::mxf8f6f4 operand formats (PTX Table 42 "MXF8F6F4 format"; ptx-encodings §5)
F8F6F4_TYPES = {0: "float8_e4m3fn", 1: "float8_e5m2", 3: "float6_e2m3fn", 4: "float6_e3m2fn", 5: "float4_e2m1fn"}
FP8_TYPES = frozenset({0, 1})         # the only narrow formats that may be MN-major
KIND_K = {"kind::f16": 16, "kind::tf32": 8, "kind::f8f6f4": 32, "kind::mxf8f6f4": 32, "kind::mxf4": 64,
          "kind::mxf4nvf4": 64}


@dataclass(frozen=True)
class InstrDescriptor:
    """The 32-bit instruction descriptor of kind::f16 / kind::tf32 (PTX Table 42)."""

    sparse_selector: int
    sparse: int
    saturate: int
    d_type: int
    a_type: int
    b_type: int
    negate_a: int
    negate_b: int
    transpose_a: int     # 0 = K-major, 1 = MN-major
    transpose_b: int
    n: int
    m: int
    max_shift: int
    reserved: int        # bits 6, 23, 29

    @staticmethod
    def decode(value: int) -> "InstrDescriptor":
        v = int(value) & 0xFFFFFFFF
        return InstrDescriptor(sparse_selector=v & 3, sparse=(v >> 2) & 1, saturate=(v >> 3) & 1,
                               d_type=(v >> 4) & 3, a_type=(v >> 7) & 7, b_type=(v >> 10) & 7,
                               negate_a=(v >> 13) & 1, negate_b=(v >> 14) & 1, transpose_a=(v >> 15) & 1,
                               transpose_b=(v >> 16) & 1, n=((v >> 17) & 0x3F) << 3, m=((v >> 24) & 0x1F) << 4,
                               max_shift=(v >> 30) & 3,
                               reserved=((v >> 6) & 1) | ((v >> 23) & 1) << 1 | ((v >> 29) & 1) << 2)

    @staticmethod
    def encode(m: int, n: int, a_type: int, b_type: int, d_type: int = 1, transpose_a: int = 0,
               transpose_b: int = 0, negate_a: int = 0, negate_b: int = 0) -> int:
        return ((d_type & 3) << 4 | (a_type & 7) << 7 | (b_type & 7) << 10 | (negate_a & 1) << 13
                | (negate_b & 1) << 14 | (transpose_a & 1) << 15 | (transpose_b & 1) << 16
                | ((n >> 3) & 0x3F) << 17 | ((m >> 4) & 0x1F) << 24)

    def validate(self, kind: str, cta_group: int = 1, ws: bool = False) -> None:
        """Check the fields for a dense MMA of `kind` (PTX Table 39/42); cta_group::2 takes M = 128 or 256, the
        weight-stationary `.ws` form M = 32, 64 or 128 and N = 64, 128 or 256 (and may set max shift)."""
        if self.sparse:
            raise DescriptorError("sparse", "bit 2 (sparsity) is set on a dense tcgen05.mma; use tcgen05.mma.sp "
                                            "(not modeled) or clear the bit")
        if self.saturate:
            raise DescriptorError("saturate", "bit 3 (saturate) is for integer kinds only")
        if self.reserved:
            raise DescriptorError("reserved", "reserved bits 6, 23 or 29 are not zero")
        if self.max_shift and not ws:
            raise DescriptorError("max_shift", "bits 30-31 (max shift) are only for tcgen05.mma.ws")
        if kind == "kind::f16":
            if self.a_type not in F16_TYPES:
                raise DescriptorError("a_type", f"A type {self.a_type} is not F16 (0) or BF16 (1) for kind::f16")
            if self.b_type != self.a_type:
                raise DescriptorError("b_type", f"B type {self.b_type} differs from A type {self.a_type}")
            if self.d_type not in D_TYPES:
                raise DescriptorError("d_type", f"D type {self.d_type} is not F16 (0) or F32 (1)")
            if self.d_type == 0 and self.a_type != 0:
                raise DescriptorError("d_type", "an F16 accumulator needs F16 inputs (BF16 accumulates in F32)")
        elif kind == "kind::f8f6f4":
            _check_narrow(self.a_type, self.b_type, self.transpose_a, self.transpose_b)
            if self.d_type not in D_TYPES:
                raise DescriptorError("d_type", f"D type {self.d_type} is not F16 (0) or F32 (1) for kind::f8f6f4")
        else:
            if self.a_type != TF32_TYPE:
                raise DescriptorError("a_type", f"A type {self.a_type} is not TF32 (2) for kind::tf32")
            if self.b_type != TF32_TYPE:
                raise DescriptorError("b_type", f"B type {self.b_type} is not TF32 (2) for kind::tf32")
            if self.d_type != 1:
                raise DescriptorError("d_type", f"D type {self.d_type} is not F32 (1) for kind::tf32")
        if ws:
            if self.m not in (32, 64, 128):
                raise DescriptorError("m", f"M = {self.m} (bits 24-28 = {self.m >> 4}); tcgen05.mma.ws needs 32, 64 "
                                           f"or 128")
            if self.n not in (64, 128, 256):
                raise DescriptorError("n", f"N = {self.n} (bits 17-22 = {self.n >> 3}); tcgen05.mma.ws needs 64, "
                                           f"128 or 256")
            return
        ms = (64, 128) if cta_group == 1 else (128, 256)
        if self.m not in ms:
            raise DescriptorError("m", f"M = {self.m} (bits 24-28 = {self.m >> 4}); cta_group::{cta_group} needs "
                                       f"{ms[0]} or {ms[1]}")
        if not 8 <= self.n <= 256:
            raise DescriptorError("n", f"N = {self.n} (bits 17-22 = {self.n >> 3}); needs 8..256 in steps of 8")

    def in_dtype(self, kind: str) -> str:
        return "tfloat32" if kind == "kind::tf32" else F16_TYPES[self.a_type]

    def operand_dtypes(self, kind: str) -> tuple[str, str]:
        if kind == "kind::f8f6f4":
            return F8F6F4_TYPES[self.a_type], F8F6F4_TYPES[self.b_type]
        return self.in_dtype(kind), self.in_dtype(kind)


def _check_narrow(a_type: int, b_type: int, transpose_a: int, transpose_b: int) -> None:
    for field, code, tr in (("a_type", a_type, transpose_a), ("b_type", b_type, transpose_b)):
        if code not in F8F6F4_TYPES:
            raise DescriptorError(field, f"{field[0].upper()} type {code} is not E4M3 (0), E5M2 (1), E2M3 (3), "
                                         f"E3M2 (4) or E2M1 (5)")
        if tr and code not in FP8_TYPES:
            raise DescriptorError("transpose_" + field[0], f"a {F8F6F4_TYPES[code]} operand must be K-major "
                                                           f"(MN-major is for E4M3/E5M2 only)")


# block-scaled kinds: (scale format code -> elements per scale factor allowed, the first when the instruction names
# none), A/B format codes allowed.  kind::mxf4nvf4 takes UE8M0 factors per 32 or per 16 elements and UE4M3 per 16
# (CUTLASS's blockscaled GEMM: "NVF4: A/B Float4E2M1FN + SF Float8E8M0FNU/Float8E4M3FN + sf_vec_size 16").
SF_TYPES = {0: "float8_e4m3fn", 1: "float8_e8m0fnu"}
SCALED_KINDS: dict[str, tuple[dict[int, tuple[int, ...]], set[int] | None]] = {
    "kind::mxf8f6f4": ({1: (32,)}, None), "kind::mxf4": ({1: (32,)}, {1}),
    "kind::mxf4nvf4": ({0: (16,), 1: (32, 16)}, {1})}


@dataclass(frozen=True)
class BlockScaledInstrDescriptor:
    """The 32-bit instruction descriptor of the block-scaled kinds (PTX Tables 43-44; CUTLASS
    InstrDescriptorBlockScaled): scale-factor ids in bits 4-5 (B) and 29-30 (A), the scale format in
    bit 23, the K size in bit 31."""

    sparse: int
    b_sf_id: int
    a_type: int
    b_type: int
    negate_a: int
    negate_b: int
    transpose_a: int
    transpose_b: int
    n: int
    sf_type: int
    m: int
    a_sf_id: int
    k_size: int
    reserved: int        # bits 0-1 (dense), 3, 6

    @staticmethod
    def decode(value: int) -> "BlockScaledInstrDescriptor":
        v = int(value) & 0xFFFFFFFF
        return BlockScaledInstrDescriptor(
            sparse=(v >> 2) & 1, b_sf_id=(v >> 4) & 3, a_type=(v >> 7) & 7, b_type=(v >> 10) & 7,
            negate_a=(v >> 13) & 1, negate_b=(v >> 14) & 1, transpose_a=(v >> 15) & 1, transpose_b=(v >> 16) & 1,
            n=((v >> 17) & 0x3F) << 3, sf_type=(v >> 23) & 1, m=((v >> 24) & 0x1F) << 4, a_sf_id=(v >> 29) & 3,
            k_size=(v >> 31) & 1, reserved=(v & 3) | ((v >> 3) & 1) << 2 | ((v >> 6) & 1) << 3)

    def validate(self, kind: str, cta_group: int = 1) -> tuple[int, ...]:
        """Check the fields for a dense MMA of `kind` (cta_group::1: M = 128; cta_group::2: M = 128 or 256); the
        numbers of elements per scale factor the scale format allows."""
        if self.sparse:
            raise DescriptorError("sparse", "bit 2 (sparsity) is set on a dense tcgen05.mma")
        if self.reserved:
            raise DescriptorError("reserved", "reserved bits 0-1, 3 or 6 are not zero")
        vecs, formats = SCALED_KINDS[kind]
        if formats is None:
            _check_narrow(self.a_type, self.b_type, self.transpose_a, self.transpose_b)
        else:
            for field, code in (("a_type", self.a_type), ("b_type", self.b_type)):
                if code not in formats:
                    raise DescriptorError(field, f"{field[0].upper()} format {code} is not 1 (E2M1, as TVM encodes "
                                                 f"it) for {kind}")
            if self.transpose_a or self.transpose_b:
                raise DescriptorError("transpose_a" if self.transpose_a else "transpose_b",
                                      f"E2M1 operands of {kind} must be K-major")
            if self.negate_a or self.negate_b:
                raise DescriptorError("negate_a" if self.negate_a else "negate_b", f"{kind} cannot negate an operand")
        if self.sf_type not in vecs:
            raise DescriptorError("sf_type", f"scale format {SF_TYPES[self.sf_type]} (bit 23 = {self.sf_type}) "
                                             f"is not allowed for {kind}")
        if self.k_size:
            raise DescriptorUnsupported("k_size", "bit 31 selects K = 96 (sm_103a/sm_107a only); not modeled")
        ms = (128,) if cta_group == 1 else (128, 256)
        if self.m not in ms:
            raise DescriptorError("m", f"M = {self.m} (bits 24-28); a block-scaled cta_group::{cta_group} MMA needs "
                                       f"M = {' or '.join(map(str, ms))}")
        if not 8 <= self.n <= 256:
            raise DescriptorError("n", f"N = {self.n} (bits 17-22 = {self.n >> 3}); needs 8..256 in steps of 8")
        return vecs[self.sf_type]

    def operand_dtypes(self, kind: str) -> tuple[str, str]:
        if kind == "kind::mxf8f6f4":
            return F8F6F4_TYPES[self.a_type], F8F6F4_TYPES[self.b_type]
        return "float4_e2m1fn_x2", "float4_e2m1fn_x2"      # two E2M1 per byte, packed


# --------------------------------------------------------------------------- tcgen05.ld / st maps

LDST_REGS = {"32x32b": 1, "16x64b": 1, "16x128b": 2, "16x256b": 4, "16x32bx2": 1}


def ldst_map(shape: str, num: int) -> tuple[np.ndarray, np.ndarray]:
    """Relative (lane, column) of register r of thread t: two int64 arrays of shape (32, R).

    For `16x32bx2` threads 16..31 are relative to the second base (taddr + immHalfSplitoff);
    the caller adds that base (ptx-encodings §3)."""
    regs = LDST_REGS[shape] * num
    t = np.arange(32, dtype=np.int64)[:, None]
    r = np.arange(regs, dtype=np.int64)[None, :]
    if shape == "32x32b":
        lane, col = t + 0 * r, r + 0 * t
    elif shape == "16x64b":
        lane, col = t // 4 + 8 * (t % 2) + 0 * r, 2 * r + (t // 2) % 2
    elif shape == "16x128b":
        lane, col = t // 4 + 8 * (r % 2), 4 * (r // 2) + t % 4
    elif shape == "16x256b":
        lane, col = t // 4 + 8 * ((r // 2) % 2), 8 * (r // 4) + 2 * (t % 4) + r % 2
    elif shape == "16x32bx2":
        lane, col = t % 16 + 0 * r, r + 0 * t
    else:
        raise ValueError(shape)
    return np.broadcast_to(lane, (32, regs)).copy(), np.broadcast_to(col, (32, regs)).copy()


# --------------------------------------------------------------------------- tcgen05.cp

def cp_rows(shape: str, multicast: str | None) -> tuple[int, int, list[np.ndarray]]:
    """(source rows, 16-byte chunks per row, [relative TMEM lane of each row, one array per copy])."""
    r128 = np.arange(128, dtype=np.int64)
    r64 = np.arange(64, dtype=np.int64)
    r32 = np.arange(32, dtype=np.int64)
    if shape == "128x256b":
        return 128, 2, [r128]
    if shape == "128x128b":
        return 128, 1, [r128]
    if shape == "4x256b":
        return 4, 2, [np.arange(4, dtype=np.int64) * 32]     # model choice: row i -> lane 32 i (CUTLASS traits)
    if shape == "64x128b" and multicast == "warpx2::02_13":
        return 64, 1, [r64, r64 + 64]
    if shape == "64x128b" and multicast == "warpx2::01_23":
        lo = np.where(r64 < 32, r64, r64 + 32)
        return 64, 1, [lo, lo + 32]
    if shape == "32x128b" and multicast == "warpx4":
        return 32, 1, [r32 + 32 * q for q in range(4)]
    raise DescriptorError("shape", f"tcgen05.cp.{shape}" + (f".{multicast}" if multicast else "")
                          + " is not a valid shape/multicast pair")


# --------------------------------------------------------------------------- byte ranges

def byte_runs(addrs: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Maximal contiguous byte ranges covering [a, a + size) for every a in `addrs` (aligned, equal-size
    elements): (starts, lengths), sorted.  Used to turn element footprints into access records."""
    a = np.asarray(addrs, dtype=np.int64).reshape(-1)
    if a.size == 0:
        return a, a
    lo = int(a.min())
    rel = a - lo
    span = int(rel.max()) // size + 1
    if span <= 4 * a.size and not (rel % size).any():
        # a box or operand tile: mark its elements in a bitmap over the span (linear, no sort; drops duplicates)
        seen = np.zeros(span, dtype=np.bool_)
        seen[rel // size] = True
        a = lo + np.flatnonzero(seen).astype(np.int64) * size
    else:
        a = np.sort(a)                  # np.unique, without its hashing
        a = a[np.r_[True, a[1:] != a[:-1]]]
    brk = np.flatnonzero(a[1:] - a[:-1] != size) + 1      # (np.diff and np.r_ cost more than these arrays)
    starts = a[np.concatenate(([0], brk))]
    ends = a[np.concatenate((brk - 1, [a.size - 1]))] + size
    return starts, ends - starts
