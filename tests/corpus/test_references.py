"""CPU implementations of reference helpers (benchmarks/corpus/references.py), checked against properties
stated independently of DeepGEMM's code: the fp8 / fp4 formats' rounding bounds, power-of-two scales, and
the packed layout's byte positions."""
from __future__ import annotations

import pytest

from benchmarks.corpus import references, standins

torch = pytest.importorskip("torch")


def _is_pow2(t) -> bool:
    m, _ = torch.frexp(t.float())
    return bool((m == 0.5).all())


@pytest.mark.parametrize("n", [256, 200])
def test_per_token_fp8_round_trips_within_e4m3_error_and_scales_are_powers_of_two(n):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(8, n, generator=g) * torch.logspace(-3, 3, 8)[:, None]
    q, sf = references.per_token_cast_to_fp8(x, use_ue8m0=True)
    assert q.dtype == torch.float8_e4m3fn and q.shape == (8, n) and sf.shape == (8, -(-n // 128))
    assert _is_pow2(sf)
    back = q.float() * sf.repeat_interleave(128, dim=1)[:, :n]
    # e4m3 keeps 3 mantissa bits: relative error <= 2^-4 for normals; subnormals (below 2^-6 * sf) absolute
    tol = x.abs() * 2.0 ** -4 + sf.repeat_interleave(128, dim=1)[:, :n] * 2.0 ** -9
    assert ((back - x).abs() <= tol).all()
    # a power-of-two scale never lets a group overflow e4m3's 448
    assert (q.float().abs() <= 448).all()


def test_per_token_fp8_packed_scales_are_the_exponent_bytes():
    x = torch.randn(4, 512)
    _, sf = references.per_token_cast_to_fp8(x, use_ue8m0=True)
    _, packed = references.per_token_cast_to_fp8(x, use_ue8m0=True, use_packed_ue8m0=True)
    assert packed.dtype == torch.int32 and packed.shape == (4, 1)
    exps = packed.view(torch.uint8).view(4, 4).to(torch.int32)
    assert torch.equal(torch.ldexp(torch.ones(4, 4), exps - 127), sf)


def test_per_block_fp8_has_one_scale_per_block():
    x = torch.zeros(256, 384)
    x[:128, 128:256] = 1000.0   # one loud block: only its scale grows
    q, sf = references.per_block_cast_to_fp8(x, use_ue8m0=True)
    assert sf.shape == (2, 3) and _is_pow2(sf)
    assert sf[0, 1] >= 1000.0 / 448 and (sf[0, 1] / 2) < 1000.0 / 448
    assert (sf[1] == sf[1, 0]).all() and sf[1, 0] < 1e-5   # all-zero blocks use the clamped amax
    assert torch.allclose(q[:128, 128:256].float() * sf[0, 1], x[:128, 128:256], rtol=2 ** -4)


def test_per_custom_dims_keeps_one_scale_per_kept_index():
    x = torch.randn(16, 64) * torch.arange(1, 17)[:, None]
    q, sf = references.per_custom_dims_cast_to_fp8(x, (0,), False)
    assert sf.shape == (16,)
    assert torch.allclose(sf, x.abs().amax(dim=1) / 448)
    assert torch.allclose(q.float() * sf[:, None], x, rtol=2 ** -3, atol=1e-6)


def test_fp4_codes_round_to_nearest_e2m1_and_cast_back_inverts():
    values = torch.tensor([[0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.5, -6.0, 0.2, 2.6, -3.4, 5.5, 7.0, -0.0]])
    x = values.repeat(1, 2)   # 32 columns: one gran_k=32 group, amax 7 -> scale 2 (ue8m0 of 7/6)
    packed, sf = references.per_token_cast_to_fp4(x, use_ue8m0=True, gran_k=32)
    assert packed.shape == (1, 16) and sf.item() == 2.0
    back = references.cast_back_from_fp4(packed, sf, gran_k=32)
    table = torch.tensor(references.FP4_VALUES)
    # every restored value is sf * an e2m1 value, the nearest one to x / sf
    nearest = table[(x.abs()[..., None] / 2 - table).abs().argmin(-1)] * 2 * torch.sign(x)
    assert torch.equal(back.abs(), nearest.abs()) and ((back == 0) | (torch.sign(back) == torch.sign(x))).all()
    # low nibble is the even column
    lo = packed[0, 0].item() & 0x0F
    assert table[lo & 7] * 2 == back[0, 0].abs()
    packed2, sf_packed = references.per_token_cast_to_fp4(x, use_ue8m0=True, gran_k=32, use_packed_ue8m0=False)
    assert torch.equal(packed2, packed)


def test_mn_major_packed_layout_puts_four_k_scales_in_one_word_mn_contiguous():
    mn, sf_k = 6, 5
    exps = torch.arange(mn * sf_k, dtype=torch.int32).view(mn, sf_k) + 100
    sf = torch.ldexp(torch.ones(mn, sf_k), exps - 127)
    out = references.get_mn_major_tma_aligned_packed_ue8m0_tensor(sf)
    assert out.shape == (mn, 2) and out.stride() == (1, 8)   # MN stride padded to a multiple of 4
    for row in range(mn):
        for word in range(2):
            got = [(int(out[row, word]) >> (8 * b)) & 0xFF for b in range(4)]
            want = [int(exps[row, 4 * word + b]) if 4 * word + b < sf_k else 0 for b in range(4)]
            assert got == want


def test_transform_broadcasts_block_scales_to_rows():
    sf = torch.tensor([[2.0 ** 3, 2.0 ** -2], [2.0 ** 5, 1.0]])   # (gran_mn=128, gran_k=128) blocks
    out = references.transform_sf_into_required_layout(sf, 200, 256, (128, 128))
    assert out.shape == (200, 1)
    word = lambda r: [(int(out[r, 0]) >> (8 * b)) & 0xFF for b in range(2)]   # noqa: E731
    assert word(0) == [130, 125] and word(127) == [130, 125] and word(128) == [132, 127]
    with pytest.raises(NotImplementedError):
        references.transform_sf_into_required_layout(sf, 200, 256, (128, 128), disable_ue8m0_cast=True)


def test_k_grouped_packing_pads_each_group_to_whole_words():
    mn = 4
    ks = [256, 640]   # gran_k 128: 2 and 5 scale rows -> 1 and 2 words
    exps = torch.arange(7 * mn, dtype=torch.int32).view(7, mn) + 110
    sf = torch.ldexp(torch.ones(7, mn), exps - 127)
    out = references.get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(sf, torch.tensor(ks), ks, 128, 128)
    assert out.shape == (3, mn)
    byte = lambda w, c, b: (int(out[w, c]) >> (8 * b)) & 0xFF   # noqa: E731
    assert [byte(0, 1, b) for b in range(4)] == [int(exps[0, 1]), int(exps[1, 1]), 0, 0]
    assert [byte(2, 3, b) for b in range(4)] == [int(exps[6, 3]), 0, 0, 0]


def test_stand_in_modules_hand_out_the_registered_helpers_only():
    dg = standins.stand_in_module("deep_gemm", None)
    assert dg.get_num_sms() == 148
    assert dg.utils.per_token_cast_to_fp8 is references.per_token_cast_to_fp8   # via a stand-in attribute
    math = standins.stand_in_module("deep_gemm.utils.math", None)
    assert math.per_block_cast_to_fp8 is references.per_block_cast_to_fp8
    assert isinstance(dg.fp8_gemm_nt, standins.StandIn)   # the reference kernel itself stays a stand-in


def test_chunk_local_cumsum_restarts_at_chunks_and_sequences():
    g = torch.ones(1, 10, 2)
    cu = torch.tensor([0, 3, 10])
    out = references.chunk_local_cumsum(g, chunk_size=4, cu_seqlens=cu)
    # sequence 1: tokens 0..2 (one chunk); sequence 2: tokens 3..6 and 7..9
    assert out[0, :, 0].tolist() == [1, 2, 3, 1, 2, 3, 4, 1, 2, 3] and out.dtype == torch.float32
    rev = references.chunk_local_cumsum(g, chunk_size=4, cu_seqlens=cu, reverse=True)
    assert rev[0, :, 1].tolist() == [3, 2, 1, 4, 3, 2, 1, 3, 2, 1]
    vec = torch.randn(2, 8, 3, 5)   # [B, T, H, S] without cu_seqlens: chunks per batch
    got = references.chunk_local_cumsum(vec, chunk_size=4, scale=0.5)
    want = vec.view(2, 2, 4, 3, 5).cumsum(2).view(2, 8, 3, 5) * 0.5
    assert torch.allclose(got, want)
    # the per-chunk differences give the increments back
    assert torch.allclose(torch.diff(out[0, 3:7, 0]), g[0, 4:7, 0])


def test_nvfp4_blocks_round_to_e2m1_with_e4m3_scales_in_the_128x4_layout():
    g = torch.Generator().manual_seed(1)
    m, k = 130, 64   # 2 row tiles, 4 scale columns
    a = (torch.randn(m, k, generator=g) * 3).to(torch.bfloat16)
    gsf = torch.tensor(448 * 6 / a.float().abs().max().item())
    packed, sf = references.nvfp4_quantize(a, gsf)
    assert packed.shape == (m, k // 2) and packed.dtype == torch.uint8
    assert sf.shape == (256, 4) and sf.dtype == torch.uint8
    flat = sf.reshape(-1)
    table = torch.tensor(references.FP4_VALUES)
    for row in (0, 31, 32, 127, 128, 129):
        for col in range(4):
            scale = flat[references.sf_offset_128x4(row, col, 4)].view(torch.float8_e4m3fn).float()
            block = a[row, 16 * col:16 * col + 16].float()
            # the block scale is global * amax / 6 rounded to e4m3 (3 mantissa bits)
            want = gsf * block.abs().max() / 6
            assert abs(scale - want) <= want * 2 ** -4
            codes = packed[row, 8 * col:8 * col + 8]
            vals = torch.stack((codes & 0xF, codes >> 4), -1).reshape(16).long()
            got = table[vals & 7] * torch.where((vals & 8) != 0, -1.0, 1.0) * scale / gsf
            # dequantized within half an e2m1 step (the largest step, 2 at the top, times the scale)
            assert ((got - block).abs() <= scale / gsf + 1e-6).all()
    # the layout's offsets cover a tile's 512 bytes exactly once
    offs = {references.sf_offset_128x4(r, c, 4) for r in range(128) for c in range(4)}
    assert offs == set(range(512))


def test_nvfp4_ties_round_to_the_even_code():
    codes = references._e2m1_rne_codes(torch.tensor([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, -5.0, 9.0]))
    assert codes.tolist() == [0, 2, 2, 4, 4, 6, 6, 14, 7]


def test_nvfp4_refuses_what_it_does_not_reproduce():
    with pytest.raises(NotImplementedError):
        references.nvfp4_quantize(torch.zeros(4, 32), torch.tensor(1.0), do_shuffle=True)
    fi = standins.stand_in_module("flashinfer", None)
    assert fi.nvfp4_quantize is references.nvfp4_quantize and fi.SfLayout.layout_128x4 == 0
