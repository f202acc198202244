"""CPU implementations of CUDA-only reference helpers the library's tests call to *build* kernel inputs.

The capture (benchmarks/corpus/capture.py) replaces a reference package that is not installed here by
stand-ins (benchmarks/corpus/standins.py), which refuse to become data.  Some tests, though, quantize or
lay out their operands with a helper of such a package (DeepGEMM's `per_token_cast_to_fp8`, its scale
layout transform, its SM count) before the launch: the kernel's inputs *are* that helper's output.  For
exactly those helpers this registry gives a CPU implementation with the helper's documented semantics,
written here in torch (never copied); the stand-in module hands it out instead of a stand-in
(`lookup`).  Everything else of the package stays a stand-in.

Semantics sources (public repositories, read with the project's search tool):
- deepseek-ai/DeepGEMM `deep_gemm/utils/math.py`: the fp8 / fp4 casts (amax per group, scale
  = amax / format max, clamped at 1e-4, optionally rounded up to a power of two: `ceil_to_ue8m0`);
- deepseek-ai/DeepGEMM `csrc/apis/layout.hpp`, `csrc/jit_kernels/impls/smxx_layout.hpp`: the SM100 scale
  layout (ue8m0 exponent bytes, four along K packed in an int32, MN-major, MN padded to 16 bytes);
- fla-org/flash-linear-attention `fla/ops/utils/cumsum.py`: `chunk_local_cumsum` (a prefix sum along time
  restarting every `chunk_size` tokens, chunks counted from each sequence's start, fp32 accumulation);
- flashinfer-ai/flashinfer `flashinfer/fp4_quantization.py` (`nvfp4_quantize` -> `fp4_quantize`) with the
  TensorRT-LLM conversion it wraps: NVFP4, 16-element blocks, e4m3 block scale = global_scale * amax / 6,
  elements times global_scale / scale rounded to e2m1 (nearest, ties to even), the scales in cuBLAS's
  128x4 block-scaling layout;
- `get_num_sms`: the capture's device answers as a B200 (`cpu_env.NUM_SMS`, the number the build uses).
"""
from __future__ import annotations

import enum
from typing import Any, Callable

FP8_MAX = 448.0      # float8_e4m3fn's largest finite value
FP4_MAX = 6.0        # float4_e2m1's largest value
AMAX_FLOOR = 1e-4    # DeepGEMM clamps a group's amax here, so an all-zero group gets a finite scale
FP4_VALUES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)   # e2m1 magnitudes by 3-bit code

_STATE = {"mk_alignment": 128}   # DeepGEMM's process-global MK alignment for contiguous layouts


def _ceil_div(x: int, y: int) -> int:
    return -(-int(x) // int(y))


def _align(x: int, y: int) -> int:
    return _ceil_div(x, y) * int(y)


def _ue8m0_ceil(sf):
    """`sf` (positive fp32) rounded up to a power of two, the exponent kept in [2^-126, 2^127]: what a
    ue8m0 scale can hold.  Exact: the rounding works on the float's bits."""
    import torch
    bits = sf.abs().float().contiguous().view(torch.int32)
    exponent = (bits >> 23) & 0xFF
    exponent = exponent + ((bits & 0x7FFFFF) != 0).to(torch.int32)   # any mantissa bit: next power of two
    return (exponent.clamp(1, 254) << 23).view(torch.float32)


def _scale(amax, fmt_max: float, use_ue8m0: bool):
    sf = amax.clamp_min(AMAX_FLOOR) / fmt_max
    return _ue8m0_ceil(sf) if use_ue8m0 else sf


def _pack_ue8m0(sf):
    """fp32 powers of two [..., k] (k % 4 == 0) -> int32 [..., k / 4]: exponent bytes, little-endian."""
    import torch
    exps = (sf.contiguous().view(torch.int32) >> 23).to(torch.uint8)
    return exps.contiguous().view(torch.int32)


def _unpack_ue8m0(packed):
    import torch
    return (packed.contiguous().view(torch.uint8).to(torch.int32) << 23).view(torch.float32)


def per_token_cast_to_fp8(x, use_ue8m0: bool, gran_k: int = 128, use_packed_ue8m0: bool = False):
    """[m, n] -> (fp8 e4m3 [m, n], scales [m, ceil(n / gran_k)]): one scale per row and `gran_k` columns,
    x ~= q * scale (DeepGEMM utils/math.py)."""
    import torch
    m, n = x.shape
    groups = _ceil_div(n, gran_k)
    padded = torch.zeros((m, groups * gran_k), dtype=torch.float32, device=x.device)
    padded[:, :n] = x.float()
    blocks = padded.view(m, groups, gran_k)
    sf = _scale(blocks.abs().amax(dim=2), FP8_MAX, use_ue8m0)
    q = (blocks / sf.unsqueeze(2)).to(torch.float8_e4m3fn).view(m, groups * gran_k)[:, :n].contiguous()
    return q, (_pack_ue8m0(sf) if use_packed_ue8m0 else sf)


def per_block_cast_to_fp8(x, use_ue8m0: bool, gran_k: int = 128):
    """[m, n] -> (fp8 [m, n], scales [ceil(m / gran_k), ceil(n / gran_k)]): one scale per gran_k x gran_k
    block (DeepGEMM utils/math.py)."""
    import torch
    m, n = x.shape
    gm, gn = _ceil_div(m, gran_k), _ceil_div(n, gran_k)
    padded = torch.zeros((gm * gran_k, gn * gran_k), dtype=torch.float32, device=x.device)
    padded[:m, :n] = x.float()
    blocks = padded.view(gm, gran_k, gn, gran_k)
    sf = _scale(blocks.abs().amax(dim=(1, 3)), FP8_MAX, use_ue8m0)
    q = (blocks / sf[:, None, :, None]).to(torch.float8_e4m3fn).view(gm * gran_k, gn * gran_k)
    return q[:m, :n].contiguous(), sf


def per_channel_cast_to_fp8(x, use_ue8m0: bool, gran_k: int = 128):
    """[m, n] (m % gran_k == 0) -> (fp8 [m, n], scales [m / gran_k, n]): one scale per column and gran_k
    rows (DeepGEMM utils/math.py)."""
    import torch
    m, n = x.shape
    if m % gran_k:
        raise ValueError(f"per_channel_cast_to_fp8: {m} rows is not a multiple of {gran_k}")
    blocks = x.float().reshape(m // gran_k, gran_k, n)
    sf = _scale(blocks.abs().amax(dim=1), FP8_MAX, use_ue8m0)
    return (blocks / sf.unsqueeze(1)).to(torch.float8_e4m3fn).view(m, n), sf


def per_custom_dims_cast_to_fp8(x, dims, use_ue8m0: bool):
    """One scale per index of the kept `dims` (amax over all other dims); the scales squeezed
    (DeepGEMM utils/math.py)."""
    import torch
    reduced = tuple(d for d in range(x.dim()) if d not in set(dims))
    sf = _scale(x.abs().float().amax(dim=reduced, keepdim=True), FP8_MAX, use_ue8m0)
    return (x.float() / sf).to(torch.float8_e4m3fn), sf.squeeze()


def _fp4_codes(v):
    """Round-to-nearest e2m1 codes (int8, sign in bit 3) of values already scaled into [-6, 6]; ties go to
    the smaller magnitude, as DeepGEMM's bucketize against the midpoints does; -0 is +0."""
    import torch
    table = torch.tensor(FP4_VALUES, dtype=torch.float32, device=v.device)
    mids = (table[1:] + table[:-1]) / 2
    mag = torch.bucketize(v.abs().clamp_max(FP4_MAX).float(), mids)
    negative = (v < 0) & (mag != 0)
    return (mag | (negative.to(torch.int64) << 3)).to(torch.int8)


def per_token_cast_to_fp4(x, use_ue8m0: bool, gran_k: int = 128, use_packed_ue8m0: bool = False):
    """[m, n] -> (packed e2m1 int8 [m, n / 2], low nibble = even column; scales [m, ceil(n / gran_k)])
    (DeepGEMM utils/math.py)."""
    import torch
    m, n = x.shape
    if n % 2 or (use_packed_ue8m0 and not use_ue8m0):
        raise ValueError("per_token_cast_to_fp4: n must be even; packed scales need use_ue8m0")
    groups = _ceil_div(n, gran_k)
    padded = torch.zeros((m, groups * gran_k), dtype=torch.float32, device=x.device)
    padded[:, :n] = x.float()
    blocks = padded.view(m, groups, gran_k)
    sf = _scale(blocks.abs().amax(dim=2), FP4_MAX, use_ue8m0)
    codes = _fp4_codes(blocks / sf.unsqueeze(2)).view(m, groups * gran_k // 2, 2)
    packed = (codes[..., 0] & 0x0F) | ((codes[..., 1] & 0x0F) << 4)
    return packed[:, : n // 2].contiguous(), (_pack_ue8m0(sf) if use_packed_ue8m0 else sf)


def cast_back_from_fp4(packed, sf, gran_k: int = 128, use_packed_ue8m0: bool = False):
    """The inverse of `per_token_cast_to_fp4`: fp32 [m, 2 * packed.shape[1]] (DeepGEMM utils/math.py)."""
    import torch
    m, half = packed.shape
    if use_packed_ue8m0:
        sf = _unpack_ue8m0(sf).view(m, -1)
    raw = packed.to(torch.int32) & 0xFF
    codes = torch.stack((raw & 0x0F, raw >> 4), dim=-1).view(m, 2 * half)
    table = torch.tensor(FP4_VALUES, dtype=torch.float32, device=packed.device)
    values = table[codes & 0x07] * torch.where((codes & 0x08) != 0, -1.0, 1.0)
    return values * sf.float()[:, torch.arange(2 * half, device=packed.device) // gran_k]


def get_mn_major_tma_aligned_packed_ue8m0_tensor(sf, psum_layout=None):
    """fp32 power-of-two scales [(b,) mn, sf_k] -> int32 [(b,) mn, ceil(sf_k / 4)], MN-major (stride 1 along
    mn), the MN stride padded to a multiple of 4 (16-byte TMA alignment); four consecutive K scales'
    exponent bytes per int32, little-endian, zero padded (DeepGEMM smxx_layout.hpp).  With a psum layout
    DeepGEMM leaves the gap rows between groups unwritten; here they hold their scales' bytes."""
    import torch
    batched = sf.unsqueeze(0) if sf.dim() == 2 else sf
    b, mn, sf_k = batched.shape
    aligned_mn, aligned_k = _align(mn, 4), _align(sf_k, 4)
    exps = torch.zeros((b, mn, aligned_k), dtype=torch.uint8, device=sf.device)
    exps[:, :, :sf_k] = (batched.float().contiguous().view(torch.int32) >> 23).to(torch.uint8)
    packed = exps.view(torch.int32)   # [b, mn, aligned_k / 4]
    out = torch.empty_strided((b, aligned_mn, aligned_k // 4), (aligned_mn * (aligned_k // 4), 1, aligned_mn),
                              dtype=torch.int32, device=sf.device)
    out.zero_()
    out[:, :mn, :] = packed
    out = out[:, :mn, :]
    return out.squeeze(0) if sf.dim() == 2 else out


def transform_sf_into_required_layout(sf, mn: int, k: int, recipe, num_groups=None, is_sfa=None,
                                      disable_ue8m0_cast: bool = False, psum_layout=None):
    """The SM100 branch of DeepGEMM's layout transform (csrc/apis/layout.hpp): fp32 scales of recipe
    (gran_mn, gran_k) -> broadcast to one scale per MN row, then `get_mn_major_tma_aligned_packed_ue8m0_tensor`.
    Already packed int32 per-row scales pass through.  The SM90 / no-ue8m0 branches are not modeled."""
    import torch
    if len(recipe) == 3:
        if is_sfa is None:
            raise ValueError("a 3-element recipe needs is_sfa")
        gran_mn, gran_k = (recipe[0] if is_sfa else recipe[1]), recipe[2]
    else:
        gran_mn, gran_k = recipe
    if disable_ue8m0_cast or gran_k not in (32, 128):
        raise NotImplementedError(f"transform_sf_into_required_layout: recipe {tuple(recipe)} with "
                                  f"disable_ue8m0_cast={disable_ue8m0_cast} is not the SM100 ue8m0 branch")
    if sf.dtype == torch.int32 and gran_mn == 1:
        return sf
    if sf.dtype != torch.float32:
        raise NotImplementedError(f"transform_sf_into_required_layout: scales of dtype {sf.dtype}")
    if gran_mn != 1:
        rows = torch.arange(mn, device=sf.device) // gran_mn
        sf = sf.index_select(-2, rows)
    return get_mn_major_tma_aligned_packed_ue8m0_tensor(sf, psum_layout)


def get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(sf, grouped_layout, ks_cpu, gran_k: int,
                                                          k_alignment: int, use_psum_layout: bool = False):
    """fp32 scales [sf_k, mn] of K-concatenated groups (group g: ks_cpu[g] / gran_k rows) -> int32
    [sum_g ceil(ks_cpu[g] / gran_k / 4), mn]: each group's exponent bytes packed four along K, padded per
    group (DeepGEMM smxx_layout.hpp).  Only the synced-ks form (ks_cpu given) is modeled."""
    import torch
    if not ks_cpu:
        raise NotImplementedError("get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor without ks_cpu")
    sf_k, mn = sf.shape
    if mn % 4 or any(int(k) % k_alignment or int(k) % gran_k for k in ks_cpu):
        raise ValueError("k-grouped scales: mn % 4 and every k % k_alignment / gran_k must be 0")
    if sum(int(k) // gran_k for k in ks_cpu) != sf_k:
        raise ValueError(f"k-grouped scales: {sf_k} scale rows for ks {list(ks_cpu)}")
    exps = (sf.float().contiguous().view(torch.int32) >> 23).to(torch.uint8)   # [sf_k, mn]
    parts, row = [], 0
    for k in ks_cpu:
        rows = int(k) // gran_k
        group = torch.zeros((_align(rows, 4), mn), dtype=torch.uint8, device=sf.device)
        group[:rows] = exps[row:row + rows]
        row += rows
        # four consecutive K rows -> the bytes of one int32 per column
        parts.append(group.view(-1, 4, mn).permute(0, 2, 1).contiguous().view(torch.int32).view(-1, mn))
    return torch.cat(parts, dim=0).contiguous() if parts else torch.empty((0, mn), dtype=torch.int32)


def set_mk_alignment_for_contiguous_layout(value: int) -> None:
    _STATE["mk_alignment"] = int(value)


def get_mk_alignment_for_contiguous_layout() -> int:
    return _STATE["mk_alignment"]


def get_num_sms() -> int:
    """The capture's device is a B200 with cpu_env.NUM_SMS SMs (the count the build fixes too)."""
    from benchmarks.corpus.cpu_env import NUM_SMS
    return NUM_SMS


def ceil_div(x: int, y: int) -> int:
    return _ceil_div(x, y)


def align(x: int, y: int) -> int:
    return _align(x, y)


def chunk_local_cumsum(g, chunk_size: int, reverse: bool = False, scale: float | None = None, cu_seqlens=None,
                       head_first: bool = False, output_dtype=None, chunk_indices=None, **_ignored):
    """FLA's `chunk_local_cumsum` (fla/ops/utils/cumsum.py): along time (dim 1, or dim 2 with head_first) of
    g [B, T, H(, S)], the inclusive prefix sum (suffix sum with `reverse`) within each chunk of `chunk_size`
    tokens; with `cu_seqlens` (B == 1) the chunks start at every sequence's first token.  Sums in fp32,
    times `scale`, returned as `output_dtype` (FLA's default: fp32)."""
    import torch
    if chunk_size & (chunk_size - 1):
        raise ValueError(f"chunk_local_cumsum: chunk_size {chunk_size} is not a power of two")
    x = g.float().movedim(2 if head_first else 1, 1)   # [B, T, ...]
    if cu_seqlens is not None and x.shape[0] != 1:
        raise ValueError("chunk_local_cumsum: cu_seqlens needs batch size 1")
    bounds = [int(v) for v in cu_seqlens.tolist()] if cu_seqlens is not None else [0, x.shape[1]]
    out = torch.zeros_like(x)
    for bos, eos in zip(bounds[:-1], bounds[1:]):
        for start in range(bos, eos, chunk_size):
            part = x[:, start:min(start + chunk_size, eos)]
            summed = part.flip(1).cumsum(1).flip(1) if reverse else part.cumsum(1)
            out[:, start:start + part.shape[1]] = summed
    if scale is not None:
        out = out * scale
    return out.movedim(1, 2 if head_first else 1).to(output_dtype or torch.float32).contiguous()


class SfLayout(enum.IntEnum):
    """flashinfer's scale-factor layouts (`flashinfer.SfLayout`)."""
    layout_128x4 = 0
    layout_8x4 = 1
    layout_linear = 2


def _e2m1_rne_codes(v):
    """e2m1 codes (sign in bit 3) of `v`, saturated to +-6, round to nearest with ties to the even code
    (cvt.rn.satfinite.e2m1x2.f32)."""
    import torch
    table = torch.tensor(FP4_VALUES, dtype=torch.float32, device=v.device)
    mag = v.abs().clamp_max(FP4_MAX).float()
    dist = (mag[..., None] - table).abs()
    best = dist.min(dim=-1, keepdim=True).values
    nearest = dist == best
    tie = nearest.sum(-1, keepdim=True) > 1
    cand = nearest & (~tie | (torch.arange(8, device=v.device) % 2 == 0))   # a tie goes to the even code
    code = cand.to(torch.int64).argmax(dim=-1)
    negative = (v < 0) & (code != 0)
    return (code | (negative.to(torch.int64) << 3)).to(torch.uint8)


def sf_offset_128x4(row, col, sf_cols: int):
    """Byte offset of scale (row, col) in the 128x4 layout: 128-row x 4-column tiles, K tiles fastest; in
    a tile, row % 32 picks a 16-byte line, (row % 128) // 32 its 4-byte group, col % 4 the byte."""
    k_tiles = _ceil_div(sf_cols, 4)
    return ((row // 128) * k_tiles * 512 + (col // 4) * 512 + (row % 32) * 16 + ((row % 128) // 32) * 4
            + col % 4)


def nvfp4_quantize(a, a_global_sf, sfLayout=SfLayout.layout_128x4, do_shuffle: bool = False,   # noqa: N803
                   sf_vec_size: int = 16, enable_pdl=None):
    """flashinfer's `nvfp4_quantize` for a row-major [M, K] input: (uint8 [M, K / 2] e2m1 pairs, low nibble
    first; uint8 e4m3 scales).  128x4 scales are [pad128(M) * pad4(K / 16)] bytes reshaped to rows of K / 16
    (as flashinfer reshapes them); linear scales are [M, K / 16].  The device divides with an approximate
    reciprocal; here the division is exact (a difference of at most an ulp before rounding)."""
    import torch
    if do_shuffle or int(sfLayout) == SfLayout.layout_8x4 or sf_vec_size != 16:
        raise NotImplementedError("nvfp4_quantize: only the unshuffled 128x4 / linear layouts with 16-element "
                                  "blocks are reproduced on the CPU")
    m, k = a.shape
    if k % sf_vec_size or a.stride(-1) != 1:
        raise NotImplementedError("nvfp4_quantize: needs a row-major input with K a multiple of 16")
    gsf = torch.as_tensor(a_global_sf, dtype=torch.float32).reshape(-1)[0].item()
    blocks = a.float().reshape(m, k // sf_vec_size, sf_vec_size)
    amax = blocks.abs().amax(dim=2)
    sf = (gsf * (amax / FP4_MAX)).clamp_max(FP8_MAX).to(torch.float8_e4m3fn)
    sf_f = sf.float()
    scale = torch.where(sf_f != 0, gsf / torch.where(sf_f != 0, sf_f, torch.ones_like(sf_f)), torch.zeros_like(sf_f))
    codes = _e2m1_rne_codes(blocks * scale.unsqueeze(2)).reshape(m, k // 2, 2)
    packed = (codes[..., 0] | (codes[..., 1] << 4)).to(torch.uint8)
    sf_bytes = sf.view(torch.uint8)
    sf_cols = k // sf_vec_size
    if int(sfLayout) == SfLayout.layout_linear:
        return packed, sf_bytes.contiguous()
    out = torch.zeros(_align(m, 128) * _align(sf_cols, 4), dtype=torch.uint8, device=a.device)
    rows = torch.arange(m, device=a.device)[:, None].expand(m, sf_cols)
    cols = torch.arange(sf_cols, device=a.device)[None, :].expand(m, sf_cols)
    out[sf_offset_128x4(rows, cols, sf_cols).reshape(-1)] = sf_bytes.reshape(-1)
    return packed, out.reshape(-1, sf_cols)


_DEEP_GEMM_MATH = (per_token_cast_to_fp8, per_block_cast_to_fp8, per_channel_cast_to_fp8,
                   per_custom_dims_cast_to_fp8, per_token_cast_to_fp4, cast_back_from_fp4, ceil_div, align)
_DEEP_GEMM_TOP = (get_num_sms, transform_sf_into_required_layout, get_mn_major_tma_aligned_packed_ue8m0_tensor,
                  get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor, set_mk_alignment_for_contiguous_layout,
                  get_mk_alignment_for_contiguous_layout)

REGISTRY: dict[str, Callable[..., Any]] = {}
for _f in _DEEP_GEMM_MATH:   # deep_gemm.utils re-exports its math module
    for _prefix in ("deep_gemm.utils.math", "deep_gemm.utils"):
        REGISTRY[f"{_prefix}.{_f.__name__}"] = _f
for _f in _DEEP_GEMM_TOP:
    REGISTRY[f"deep_gemm.{_f.__name__}"] = _f
for _prefix in ("flashinfer", "flashinfer.quantization", "flashinfer.fp4_quantization"):
    REGISTRY[f"{_prefix}.nvfp4_quantize"] = nvfp4_quantize
    REGISTRY[f"{_prefix}.SfLayout"] = SfLayout   # type: ignore[assignment]
for _prefix in ("fla.ops.utils", "fla.ops.utils.cumsum"):
    REGISTRY[f"{_prefix}.chunk_local_cumsum"] = chunk_local_cumsum


def lookup(qualified: str) -> Callable[..., Any] | None:
    """The CPU implementation of reference helper `qualified` (e.g. "deep_gemm.get_num_sms"), or None."""
    return REGISTRY.get(qualified)
