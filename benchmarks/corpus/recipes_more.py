"""Launch recipes of the MSA sparse-attention forward trio, the KDA fused backward and the GDN CP prefill's UTCMMA
fixups (see recipes.py for what an entry says; split out of it, which merges `MORE_RECIPES` into `RECIPES` and
asks `EXTRA_RECIPES` for modules whose functions take different launch arguments)."""
from __future__ import annotations

from benchmarks.corpus.recipes import _KDA, _MSA, _MSA_PLAN, Recipe


def _msa_forward(fp4: bool) -> Recipe:
    """The MSA sparse-attention forward (`sparse_atten_fwd.py`, and its NVFP4-KV twin): prepare_data (the CSR of
    sparse_prepare_fwd_split_atomic's prepare_data, `_frozen_qsplit`, cu_seqlens_k, softmax_scale = 128 ** -0.5),
    make_outputs (o_partial (topk, total_q, head_q, 128), lse_partial (topk, total_q, head_q)) and tirx_args:
    (k, v, [k_scale, v_scale, k_global_scale,] q_indices, qsplit, row_ptr, metadata, work_count, o_partial,
    lse_partial, q_flat, cu_seqlens_q, cu_seqlens_k, scale * log2(e), that / temperature, 1 / temperature,
    total_rows, head_kv, max_seqlen_q, work_capacity, total_k, total_q, head_q, nnz_capacity, total_rows,
    batches, topk[, scale_numel]).  The kernel encodes its own tensor maps (host_prelude).  Flat KV only: a
    paged configuration leaves total_k unbound (the page table is not built here)."""
    name = "sparse_atten_fwd_nvfp4_kv" if fp4 else "sparse_atten_fwd"
    width = "64" if fp4 else "128"          # PACKED_HEAD_DIM: two e2m1 values a byte
    values = {
        "softmax_scale_log2": "128 ** -0.5 * LOG2_E",
        "lse_temperature_scale_log2": "128 ** -0.5 * LOG2_E / (temperature or 1.0)",
        "lse_temperature_inv_scale": "1.0 / (temperature or 1.0)",
        "num_kv_blocks": "plan['total_rows']", "num_heads_kv": "head_kv", "seq_len_q": "plan['max_seqlen_q']",
        "work_capacity": "plan['work_capacity']", "total_k": "sum(plan['seqlens_k']) if not paged else None",
        "total_q": "plan['total_q']", "head_q": "head_kv * qhead_per_kv", "nnz": "plan['nnz_capacity']",
        "total_rows": "plan['total_rows']", "num_batches": "batch",
        "k_dim0": "total_k", "k_dim1": "head_kv", "k_dim2": width, "v_dim0": "total_k", "v_dim1": "head_kv",
        "v_dim2": width, "k2q_q_indices_dim0": "head_kv * nnz", "k2q_qsplit_indices_dim0": "head_kv * nnz",
        "k2q_row_ptr_dim0": "head_kv * (total_rows + 1)", "scheduler_metadata_dim0": "work_capacity * 6",
        "work_count_dim0": "1", "o_partial_dim0": "topk * total_q * head_q * 128",
        "lse_partial_dim0": "topk * total_q * head_q", "q_flat_dim0": "total_q * head_q", "q_flat_dim1": "128",
        "cu_seqlens_q_dim0": "batch + 1", "cu_seqlens_k_dim0": "batch + 1"}
    data = {"k2q_q_indices": "plan['k2q_q_indices']", "k2q_qsplit_indices": "plan['k2q_qsplit_indices']",
            "k2q_row_ptr": "plan['k2q_row_ptr']", "scheduler_metadata": "plan['scheduler_metadata']",
            "work_count": "full(1, plan['work_count'])", "cu_seqlens_q": "plan['cu_seqlens_q']",
            "cu_seqlens_k": "plan['cu_seqlens_k']"}
    source = _MSA.format(name) + ": prepare_data, make_outputs, tirx_args, sparse_atten_fwd.py: _frozen_qsplit"
    if fp4:
        # prepare_data: one e4m3 block scale per 16 values in the 128x4 tile layout -- (total_k * head_kv rows
        # rounded up to 128) x (8 columns rounded up to 4) bytes, drawn in [0x30, 0x40] (here that band in
        # order) --, k_global_scale [0.75] when `k_global`; tirx_args passes k_scale.numel() as scale_numel
        values["scale_numel"] = "roundup(total_k * head_kv, 128) * roundup(128 // 16, 4)"
        data.update({"k_scale": "0x30 + arange(scale_numel) % 17", "v_scale": "0x30 + arange(scale_numel) % 17",
                     "k_global_scale": "full(1, 0.75, 'float32') if k_global else None"})
        source += ", _dequant_nvfp4_to_bf16"
    return Recipe(source=source, let={"plan": _MSA_PLAN}, values=values, data=data)


MORE_RECIPES: dict[str, Recipe] = {
    "msa_sparse_atten_fwd_sm100": _msa_forward(fp4=False),
    "msa_sparse_atten_fwd_nvfp4_kv_sm100": _msa_forward(fp4=True),
    # prepare_data (split_counts = the CSR's degrees per (query, kv head); partials (topk, total_q, head_q[, 128]));
    # make_outputs (o_out, lse_out); tirx_args: (o_partial, lse_partial, o_out, lse_out, one-element dummies for
    # the absent temperature buffers, cu_seqlens_q, dummy seqused_q, split_counts, dummy output scale, the
    # strides of those row-major tensors, head_kv, qhead_per_kv, total_q, head_q, batches, fast_divmod(head_q)).
    # Only without temperature, seqused and output_scale (their buffers are left unbound otherwise).
    "msa_sparse_atten_fwd_combine_sm100": Recipe(
        source=_MSA.format("sparse_atten_fwd_combine") + ": prepare_data, make_outputs, tirx_args, fast_divmod",
        let={"plan": _MSA_PLAN, "hq": "head_kv * qhead_per_kv", "tq": "plan['total_q']",
             "divmod": "fast_divmod(hq)"},
        values={"o_partial_dim0": "topk * tq * hq * 128", "lse_partial_dim0": "topk * tq * hq",
                "o_out_dim0": "tq * hq * 128", "lse_out_dim0": "tq * hq",
                "lse_temperature_partial_dim0": "None if temperature else 1",
                "lse_temperature_out_dim0": "None if temperature else 1", "cu_seqlens_dim0": "batch + 1",
                "seqused_q_dim0": "None if seqused else 1", "split_counts_dim0": "tq * head_kv",
                "output_scale_ptr_dim0": "None if output_scale else 1",
                "stride_op_split": "tq * hq * 128", "stride_op_q": "hq * 128", "stride_op_h": "128",
                "stride_lp_split": "tq * hq", "stride_lp_q": "hq", "stride_o_q": "hq * 128", "stride_o_h": "128",
                "stride_l_q": "hq", "stride_sc_q": "head_kv", "total_q": "tq", "head_q": "hq",
                "num_batches": "batch", "head_div_mul": "divmod[0]", "head_div_s1": "divmod[1]",
                "head_div_s2": "divmod[2]"},
        data={"cu_seqlens": "plan['cu_seqlens_q']", "split_counts": "plan['split_counts']"}),
}


def _kda_token_map(tensor: str, heads: str, inner: str, box_inner: str, dtype: str = "bfloat16",
                   swizzle: str = "3") -> dict[str, str]:
    """kda_backward_packed.py `token_map`: a [T, heads, inner] tensor as dims (inner, T, heads), box
    (box_inner, 64, 1)."""
    size = "4" if dtype == "float32" else "2"
    return {"tensor": tensor, "dtype": dtype, "dims": f"({inner}, T, {heads})",
            "strides": f"({size} * {inner} * {heads}, {size} * {inner})", "box": f"({box_inner}, 64, 1)",
            "swizzle": swizzle}


# setup's fused family (HQ == HV, HV % 8 == 0, whole 64-token chunks): q, k (1, T, HQ, 128) bf16, v, do, egcache
# (1, T, HV, 128) bf16, beta (1, T, HV) bf16, Aqk / Akk (1, T, HV, 64) bf16, g (1, T, HV, 128) fp32, h0 / dht /
# dh0 (N, HV, 128, 128) fp32, hsnap (T / 64 + N, HV, 128, 128) bf16, dq / dk / dg fp32, dv bf16, db (1, T, HV)
# fp32; flags zeroed (N * HV chains); the schedule of build_schedule_tensor over min(num_sms = 148, chains) CTAs
# (hardware_num_sms' default: the printed kernels' 15-int rows are its maxp2 6 + maxp1 7); the ten maps of
# token_map / state_map; scale 1 / sqrt(128), epoch 1 (run's first increment), range_entries = N * HV * parts;
# range_allowed = longest sequence <= 4096.  range_flags holds what the guard launch writes first: its mode
# word is 0 for an entry whose chunk-end gates all stay >= -4 and whose inputs are in range -- the default
# "mild" gate profile (prepare_data: increments in [-0.05, -0.01], chunk-local cumsum over 64 tokens, so >= -3.2)
# with unit-scale inputs -- so zeros (the registry configuration names no gate_profile: the default).
_KDA_FUSED = Recipe(
    source=_KDA + ": KDABackwardConfig, prepare_data, setup, _range_parts, _count_chunks, build_schedule, "
                  "build_schedule_tensor, token_map, state_map, make_range_guard",
    functions=("kda_bwd_native_fused", "kda_bwd_fused"),
    let={"lens": "lengths(seq_lens)", "N": "len(lens)", "T": "sum(lens)", "HQ": "num_qk_heads", "HV": "num_v_heads",
         "fused": "HQ == HV and HV % 8 == 0 and chunks(lens, 64)[1]",
         "chains": "N * HV if fused else None", "ctas": "min(148, chains)", "sched": "kda_schedule(chains, ctas)",
         "parts": "min(16, max(1, cdiv(1024, N * HV)))", "snaps": "T // 64 + N"},
    values={"q_dim0": "T * HQ * 128", "k_dim0": "T * HQ * 128", "v_dim0": "T * HV * 128", "beta_dim0": "T * HV",
            "aqk_dim0": "T * HV * 64", "akk_dim0": "T * HV * 64", "g_dim0": "T * HV * 128",
            "egcache_dim0": "T * HV * 128", "do_dim0": "T * HV * 128", "dht_dim0": "N * HV * 128 * 128",
            "h0_dim0": "N * HV * 128 * 128", "hsnap_dim0": "snaps * HV * 128 * 128", "cu_seqlens_dim0": "N + 1",
            "flags_dim0": "chains", "sched_dim0": "len(sched['table'])", "dq_dim0": "T * HQ * 128",
            "dk_dim0": "T * HQ * 128", "dv_dim0": "T * HV * 128", "db_dim0": "T * HV", "dg_dim0": "T * HV * 128",
            "dh0_dim0": "N * HV * 128 * 128", "range_flags_dim0": "N * HV * parts",
            "scale": "1 / sqrt(128)", "num_seqs": "N", "num_ctas": "ctas", "epoch": "1",
            "range_entries": "N * HV * parts", "range_allowed": "int(max(lens) <= 4096)"},
    data={"cu_seqlens": "cu_seqlens(lens, 'int64')", "flags": "full(chains, 0)", "sched": "sched['table']",
          "range_flags": "full(N * HV * parts, 0)"},
    maps={"q_map": _kda_token_map("q", "HQ", "128", "64"), "k_map": _kda_token_map("k", "HQ", "128", "64"),
          "v_map": _kda_token_map("v", "HV", "128", "64"),
          "g_map": _kda_token_map("g", "HV", "128", "32", "float32"),
          "eg_map": _kda_token_map("egcache", "HV", "128", "64"),
          "beta_map": _kda_token_map("beta", "HV // 8", "8", "8", swizzle="0"),
          "do_map": _kda_token_map("do", "HV", "128", "64"), "aqk_map": _kda_token_map("aqk", "HV", "64", "64"),
          "akk_map": _kda_token_map("akk", "HV", "64", "64"),
          "h_map": {"tensor": "hsnap", "dtype": "bfloat16", "dims": "(128, 128, snaps * HV)",
                    "strides": "(256, 256 * 128)", "box": "(64, 128, 1)", "swizzle": "3"}})


_GDN = "tirx_kernels/ported/flashinfer/gdn_prefill/gdn_cp_prefill_sm100.py"


def _gdn_fixup(rows: int, function: str) -> Recipe:
    """The GDN CP prefill's UTCMMA fixup with `rows` state rows a CTA (grid 128 / rows per state): prepare_data
    (transfer, local_state, fixed_state (TOTAL_CP_CHUNKS, state_heads, 128, 128) fp32 -- the first two what
    mn_precompute writes, fixed_state zeroed --, initial / final state (STATE_POOL, heads, 128, 128), the
    initial-state workspace (sequences, heads, 128, 128) fp32, state_indices, cu_seqlens); _stage_args' fixup
    tuple; _build_fixup_tensor_maps: fp32 dims (128, 128, heads, chunks), transfer box (32, 128, 1, 1) with
    CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B (code 4), local_state box (32, rows, 1, 1) 128B-swizzled.  The chunk
    count follows _specialization: _choose_cp_chunk_len (hardware_num_sms' default 148) and _chunk_bound.  The
    library launches this variant only when _fixup_kind picks it (more parallel states than this configuration
    has); its arguments are the same either way."""
    return Recipe(
        source=_GDN + ": GDNCPPrefillSM100Config, _specialization, _choose_cp_chunk_len, _chunk_bound, "
                      "prepare_data, _stage_args, _build_fixup_tensor_maps, _make_fixup_utcmma",
        functions=(function,),
        let={"lens": "lengths(seq_lens)", "S": "len(lens)", "T": "sum(lens)", "H": "max(q_heads, v_heads)",
             "approx": "cdiv(T, 512) * H", "square": "max(lens) * 64",
             # the short-workload arm of _choose_cp_chunk_len (approx * 2 < 148); the other arm's search is not
             # written here, so a configuration that needs it leaves the chunk length unbound
             "root": "int(square ** 0.5) + (1 if int(square ** 0.5) ** 2 < square else 0)",
             "cp": "cp_chunk_len or (max(64, cdiv(root, 64) * 64) if approx * 2 < 148 else None)",
             "chunks": "min(S, T) + (T - min(S, T)) // cp", "pool": "S + 2 if indexed_state else S",
             "plane": "128 * 128"},
        values={"transfer_dim0": "chunks * H * plane", "local_state_dim0": "chunks * H * plane",
                "initial_state_dim0": "pool * H * plane", "initial_state_workspace_dim0": "S * H * plane",
                "fixed_state_dim0": "chunks * H * plane", "final_state_dim0": "pool * H * plane",
                "state_indices_dim0": "S", "cu_seqlens_dim0": "S + 1"},
        data={"fixed_state": "full(chunks * H * plane, 0.0, 'float32')",
              "initial_state_workspace": "full(S * H * plane, 0.0, 'float32')",
              "state_indices": "arange(S) if not indexed_state else None", "cu_seqlens": "cu_seqlens(lens)"},
        maps={"transfer_map": {"tensor": "transfer", "dtype": "float32", "dims": "(128, 128, H, chunks)",
                               "strides": "(512, 512 * 128, 512 * 128 * H)", "box": "(32, 128, 1, 1)",
                               "swizzle": "4"},
              "local_state_map": {"tensor": "local_state", "dtype": "float32", "dims": "(128, 128, H, chunks)",
                                  "strides": "(512, 512 * 128, 512 * 128 * H)", "box": f"(32, {rows}, 1, 1)",
                                  "swizzle": "3"}})




def _flex_bwd_map(tensor: str, seq: str, heads: str, dim: str) -> dict[str, str]:
    """data.py `_input_tensormap` over a fixed (batch, seq, heads, dim) fp16 tensor: dims (dim, seq, heads, batch),
    box (atom, 128, 1, 1) with atom = gcd(64, dim rounded up to 16) features and the swizzle of its bytes."""
    return {"tensor": tensor, "shape": f"(batch, {seq}, {heads}, {dim})", "tensor_dtype": "float16",
            "dtype": "float16", "dims": f"({dim}, {seq}, {heads}, batch)",
            "strides": f"({heads} * {dim} * 2, {dim} * 2, {seq} * {heads} * {dim} * 2)",
            "box": f"(atom({dim}), 128, 1, 1)", "swizzle": f"swizzle(atom({dim}) * 2)"}


# data.py prepare_data (fixed layout: q / do (batch, seqlen_q, hq, d), k / v (batch, seqlen_kv, hkv, d) fp16; the
# plan of cuDNN's create_mask_plan for the causal endpoints of _sample_endpoints; softmax_scale 1 / sqrt(d)),
# _prepare_target_workspace (the combined fp32 workspace: dpsum and lse_log2 planes of hq * batch * q128 rows,
# then dQ, dK, dV accumulators -- kernel.py get_kernel's sum_plane / dq_base / dk_base / dv_base), _build_maps
# (not cooperative, not exact MHA: dk_map is the q map, dv_map the v map) and target_launch (maps, dk, dv,
# cu_q, cu_k, the plan arrays, semaphores, workspace, scale; absent ones as one-element dummies).  Only
# non-varlen, non-deterministic, broadcast-mask causal configurations: the kernel then reads neither cu_k_blocks,
# dq_write_order(_full), sequence_desc, work_desc nor the semaphores (kernel.py), given as one zero each (the
# semaphores sized to every index the kernel can form) -- the sizes cuDNN's plan gives them are not derived.
_FLEX_BWD = Recipe(
    source="tirx_kernels/ported/cudnn/flex_attention/_flex_attention_backward_sm100/data.py: prepare_data, "
           "_sample_endpoints, _make_endpoints, _prepare_target_workspace, _input_tensormap, _build_maps, "
           "target_launch; kernel.py: get_kernel, the main kernel's plan and mask reads",
    functions=("bwd",),
    let={"ok": "mask_type == 'causal' and not varlen and not deterministic and mask_head_mode == 'broadcast'",
         "plan": "flex_bwd_causal_plan(q_len=seqlen_q, k_len=seqlen_kv, rows=batch) if ok else None",
         "td": "roundup(head_dim, 16)", "tdv": "roundup(head_dim_v, 16)", "qb": "cdiv(seqlen_q, 128)",
         "tasks": "cdiv(seqlen_kv, 128)", "qrows": "batch * qb * 128", "krows": "batch * tasks * 128",
         "sum_plane": "num_q_heads * qrows"},
    values={"dk_output_dim0": "batch * seqlen_kv * num_kv_heads * head_dim",
            "dv_output_dim0": "batch * seqlen_kv * num_kv_heads * head_dim_v", "cu_q_dim0": "1", "cu_k_dim0": "1",
            "partial_count_dim0": "len(plan['partial_count'])", "partial_index_dim0": "len(plan['partial_index'])",
            "full_count_dim0": "len(plan['full_count'])", "full_index_dim0": "len(plan['full_index'])",
            "cu_k_blocks_dim0": "1", "dq_write_order_dim0": "1", "dq_write_order_full_dim0": "1",
            "partial_offset_dim0": "len(plan['partial_offset'])", "full_offset_dim0": "len(plan['full_offset'])",
            "packed_mask_dim0": "len(plan['packed_mask'])", "sequence_desc_dim0": "1", "work_desc_dim0": "1",
            "dq_semaphore_dim0": "batch * num_q_heads * qb", "dk_semaphore_dim0": "num_kv_heads * batch * tasks * 2",
            "dv_semaphore_dim0": "num_kv_heads * batch * tasks * 2",
            "workspace_dim0": "2 * sum_plane + num_q_heads * qrows * td + num_kv_heads * krows * (td + tdv)",
            "softmax_scale": "1 / sqrt(head_dim) if softmax_scale is None else softmax_scale"},
    data={"cu_q": "full(1, 0)", "cu_k": "full(1, 0)", "cu_k_blocks": "full(1, 0)", "dq_write_order": "full(1, 0)",
          "dq_write_order_full": "full(1, 0)", "sequence_desc": "full(1, 0)", "work_desc": "full(1, 0)",
          "partial_count": "plan['partial_count']", "partial_index": "plan['partial_index']",
          "full_count": "plan['full_count']", "full_index": "plan['full_index']",
          "partial_offset": "plan['partial_offset']", "full_offset": "plan['full_offset']",
          "packed_mask": "plan['packed_mask']", "dq_semaphore": "full(batch * num_q_heads * qb, 0)",
          "dk_semaphore": "full(num_kv_heads * batch * tasks * 2, 0)",
          "dv_semaphore": "full(num_kv_heads * batch * tasks * 2, 0)"},
    maps={"q_map": _flex_bwd_map("q", "seqlen_q", "num_q_heads", "head_dim"),
          "k_map": _flex_bwd_map("k", "seqlen_kv", "num_kv_heads", "head_dim"),
          "v_map": _flex_bwd_map("v", "seqlen_kv", "num_kv_heads", "head_dim_v"),
          "do_map": _flex_bwd_map("do", "seqlen_q", "num_q_heads", "head_dim_v"),
          "dk_map": _flex_bwd_map("q", "seqlen_q", "num_q_heads", "head_dim"),
          "dv_map": _flex_bwd_map("v", "seqlen_kv", "num_kv_heads", "head_dim_v")})


# modules whose functions take different launch arguments: one more recipe each (`functions` says which)
EXTRA_RECIPES: dict[str, tuple[Recipe, ...]] = {
    "kda_backward_packed": (_KDA_FUSED,),
    # the printed fixup_utcmma has a 1-CTA grid (rows 128), fixup_utcmma__1 a 2-CTA grid (rows 64)
    "gdn_cp_prefill_sm100": (_gdn_fixup(128, "fixup_utcmma"), _gdn_fixup(64, "fixup_utcmma__1")),
    "cudnn_sm100_flex_attention_backward": (_FLEX_BWD,)}
