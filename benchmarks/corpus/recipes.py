"""Launch recipes: inputs for corpus functions whose capture failed, read from the library's own launch code.

Where the library's `run_test` cannot run on the CPU (it needs a CUDA-only reference package before it
launches anything), `capture.py` records nothing, and a function whose parameters have extents or scalars the
configuration does not name gets no verdict.  The library's host code still says how each of them follows from
the configuration (`prepare_data`, the launch wrapper's argument list).  A recipe writes that down, one entry
per registry module in `RECIPES`, each citing the file and functions it was read from:

- `let`: named intermediate values (evaluated in order), e.g. `q128 = roundup(seqlen_q, 128)`;
- `values`: extents (`o_dim0`) and scalar parameters (`softmax_scale`) by name;
- `data`: buffers whose contents must be valid (offsets, indices, schedules) and are built the way the host
  code builds them -- with the builders below, each a documented small function, never random;
- `maps`: tensor-map parameters, with the encode arguments the host code passes to
  `runtime.cuTensorMapEncodeTiled` (`dtype`, `dims`, byte `strides`, `box`, `swizzle` code, `oob_fill`;
  element strides 1) and the tensor it encodes over (`tensor`: a buffer parameter's name, whose array the map
  then reads -- at `byte_offset` -- as on the GPU, or a host tensor of `shape` and `tensor_dtype`, shared by the
  maps naming it);
- `functions`: the functions the entry covers (all of the module's when empty).

Every expression is a Python expression over the configuration's keys, the `let` names, the builders and
`sqrt`/`log2`/`LOG2_E`; `evaluate` accepts only names, constants, arithmetic, comparisons, conditionals,
subscripts and calls of those helpers (no attributes), so an entry is data, not code.  A symbolic extent of the
printed function (`num_heads_kv * (total_rows + 1)`) is evaluated the same way over the recipe's values.
A new module needs one entry here, not new code (a new kind of index data needs one builder).
"""
from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from benchmarks.corpus.recipe_data import (bsa_block_sizes, bsa_k2q, flex_causal_plan, flex_full_plan, flex_work,
                                           fast_divmod, flex_bwd_causal_plan, kda_schedule,
                                           mqa_ks_ke, msa_plan, paged_block_table, paged_mqa_metadata)

LOG2_E = math.log2(math.e)


class RecipeError(ValueError):
    """An expression of a recipe (or a printed extent) that cannot be evaluated: named in the problems."""


# ----------------------------------------------------------------------------------------------- builders

def roundup(x: int, m: int) -> int:
    """x rounded up to a multiple of m."""
    return (int(x) + m - 1) // m * m


def cdiv(x: int, m: int) -> int:
    return (int(x) + m - 1) // m


def arange(n: int, dtype: str = "int32") -> np.ndarray:
    """0, 1, ..., n-1 (payload indices the host code numbers in order)."""
    return np.arange(int(n), dtype=dtype)


def full(n: int, value: Any, dtype: str = "int32") -> np.ndarray:
    return np.full(int(n), value, dtype=dtype)


def cu_seqlens(lengths, dtype: str = "int32") -> np.ndarray:
    """Cumulative sequence offsets [0, l0, l0 + l1, ...]: monotone, the last one the total."""
    return np.concatenate([[0], np.cumsum([int(x) for x in lengths])]).astype(dtype)


def lengths(text: Any) -> tuple:
    """A configuration's sequence-length list, which the index stores as its repr string ("(1024, 1024)")."""
    if isinstance(text, (list, tuple)):
        return tuple(int(x) for x in text)
    return tuple(int(x) for x in str(text).strip("()[] ").split(",") if x.strip())


def chunks(lengths, size: int) -> tuple[int, bool]:
    """(whole `size`-token chunks over the sequences, whether every length is a multiple of `size`)."""
    return sum(cdiv(x, size) for x in lengths), all(int(x) % size == 0 for x in lengths)


def swizzle(row_bytes: int) -> int:
    """The CUtensorMapSwizzle code of the 32/64/128-byte swizzle a host picks by a row's bytes."""
    return {32: 1, 64: 2, 128: 3}[int(row_bytes)]


def atom(dim: int) -> int:
    """Features in one TMA box row of the cuDNN flex backward's input maps: gcd(64, dim rounded up to 16)."""
    return math.gcd(64, roundup(dim, 16))


def concat(*parts) -> np.ndarray:
    return np.concatenate([np.asarray(p).reshape(-1) for p in parts])


HELPERS: dict[str, Any] = {"roundup": roundup, "cdiv": cdiv, "arange": arange, "full": full,
                           "cu_seqlens": cu_seqlens, "lengths": lengths, "chunks": chunks, "swizzle": swizzle, "concat": concat,
                           "sqrt": math.sqrt, "log2": math.log2, "LOG2_E": LOG2_E, "min": min, "max": max,
                           "sum": sum, "len": len, "int": int, "float": float, "None": None,
                           "True": True, "False": False, "msa_plan": msa_plan,
                           "mqa_ks_ke": mqa_ks_ke, "paged_block_table": paged_block_table,
                           "paged_mqa_metadata": paged_mqa_metadata, "bsa_k2q": bsa_k2q,
                           "bsa_block_sizes": bsa_block_sizes, "flex_full_plan": flex_full_plan,
                           "flex_work": flex_work, "flex_causal_plan": flex_causal_plan,
                           "fast_divmod": fast_divmod, "kda_schedule": kda_schedule,
                           "flex_bwd_causal_plan": flex_bwd_causal_plan,
                           "atom": atom}

_ALLOWED = (ast.Expression, ast.Name, ast.Load, ast.Constant, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare,
            ast.IfExp, ast.Call, ast.Subscript, ast.Tuple, ast.List, ast.keyword, ast.Slice,
            ast.operator, ast.unaryop, ast.boolop, ast.cmpop)


def evaluate(expr: str, env: Mapping[str, Any]) -> Any:
    """The value of `expr` over `env` and the helpers; RecipeError naming what is missing or not allowed."""
    try:
        tree = ast.parse(str(expr).strip(), mode="eval")
    except SyntaxError as err:
        raise RecipeError(f"`{expr}` is not an expression ({err.msg})") from None
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED):
            raise RecipeError(f"`{expr}`: {type(node).__name__} is not allowed in a recipe")
        if isinstance(node, ast.Name) and node.id not in env and node.id not in HELPERS:
            raise RecipeError(f"`{expr}`: {node.id} has no value (not in the configuration or the recipe)")
    try:
        return eval(compile(tree, "<recipe>", "eval"), {"__builtins__": {}}, {**HELPERS, **env})  # noqa: S307
    except Exception as err:   # noqa: BLE001 -- an arithmetic failure is the recipe's, named
        raise RecipeError(f"`{expr}`: {type(err).__name__}: {err}") from None


# ----------------------------------------------------------------------------------------------- recipes

@dataclass(frozen=True)
class Recipe:
    """How one module's launch code builds its kernels' arguments from the configuration (see the module doc)."""
    source: str
    values: Mapping[str, str]
    let: Mapping[str, str] = field(default_factory=dict)
    data: Mapping[str, str] = field(default_factory=dict)
    maps: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    functions: tuple[str, ...] = ()

    def covers(self, function: str) -> bool:
        return not self.functions or function in self.functions

    def environment(self, config: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """(name -> value for the configuration, the `let` names and every value; problems for those that fail)."""
        env: dict[str, Any] = dict(config)
        problems: list[str] = []
        failed: set[str] = set()
        for table in (self.let, self.values):
            for name, expr in table.items():
                if _names(expr) & failed:
                    failed.add(name)           # follows from a failure already named
                    continue
                try:
                    env[name] = evaluate(expr, env)
                except RecipeError as err:
                    failed.add(name)
                    problems.append(f"launch recipe value {name}: {err}")
        return env, problems

    def encodes(self, env: Mapping[str, Any], params=None) -> tuple[dict[str, dict], list[str]]:
        """(param -> encode record, problems) for the entry's maps (those among `params` when given)."""
        out: dict[str, dict] = {}
        problems: list[str] = []
        for param, spec in self.maps.items():
            if params is not None and param not in params:
                continue
            try:
                dims = [int(x) for x in evaluate(spec["dims"], env)]
                enc = {"dtype": spec["dtype"], "dims": dims,
                       "strides": [int(x) for x in evaluate(spec.get("strides", "()"), env)],
                       "box": [int(x) for x in evaluate(spec["box"], env)],
                       "element_strides": [1] * len(dims),
                       "swizzle": int(evaluate(spec.get("swizzle", "0"), env)),
                       "oob_fill": int(evaluate(spec.get("oob_fill", "0"), env)),
                       "tensor": spec["tensor"],
                       "byte_offset": int(evaluate(spec.get("byte_offset", "0"), env))}
                if "shape" in spec:
                    enc["tensor_shape"] = [int(x) for x in evaluate(spec["shape"], env)]
                    enc["tensor_dtype"] = spec.get("tensor_dtype", spec["dtype"])
                out[param] = enc
            except (RecipeError, KeyError, TypeError, ValueError) as err:
                problems.append(f"launch recipe map {param}: {err}")
        return out, problems


def _names(expr: str) -> set[str]:
    try:
        return {n.id for n in ast.walk(ast.parse(str(expr).strip(), mode="eval")) if isinstance(n, ast.Name)}
    except SyntaxError:
        return set()


_BSA = "tirx_kernels/ported/cudnn/bsa/_block_sparse_attention_backward_sm100_{}/data.py"


def _bsa_map(tensor: str, seqlen: str, dim: str, box: str, swizzle) -> dict[str, str]:
    """A bf16 map over a contiguous (batch, heads, seqlen, dim) tensor, as the bsa backward hosts encode them."""
    return {"tensor": tensor, "shape": f"(batch, num_heads, {seqlen}, {dim})", "dtype": "bfloat16",
            "dims": f"({dim}, {seqlen}, num_heads, batch)",
            "strides": f"({dim} * 2, {seqlen} * {dim} * 2, num_heads * {seqlen} * {dim} * 2)",
            "box": box, "swizzle": str(swizzle)}

RECIPES: dict[str, Recipe] = {
    # prepare_data: o = the forward's output (batch, heads, seqlen_q, 128) bf16, lse (batch, heads, seqlen_q)
    # fp32; _workspace_layout: five fp32 planes of roundup8 rows; tirx_launch: sum_odo(o, do, lse, workspace),
    # convert(workspace, dq, dk, dv, softmax_scale) with softmax_scale = 1/sqrt(128) unless configured
    "cudnn_sm100_bsa_backward_blk64": Recipe(
        source=_BSA.format("blk64") + ": prepare_data, _make_metadata, _workspace_layout, _new_mutable_state, "
                                      "_build_tensor_maps, tirx_launch",
        functions=("sum_odo", "bwd", "convert"),
        let={"n": "batch * num_heads", "q8": "roundup(seqlen_q, 8)", "k8": "roundup(seqlen_kv, 8)",
             "q_blocks": "cdiv(seqlen_q, 64)", "kvb": "cdiv(seqlen_kv, 64)",
             "bucket": "bucket_size_blocks or (1024 if q_blocks >= 3000 else 1088 if q_blocks < 2048 else 1152)",
             "csr": "bsa_k2q(batch=batch, heads=num_heads, q_blocks=q_blocks, kv_blocks=kvb, maximum=kv_blocks, "
                    "bucket=bucket, mode=block_count_mode)"},
        values={"o_dim0": "n * seqlen_q * 128", "do_dim0": "n * seqlen_q * 128", "lse_dim0": "n * seqlen_q",
                "workspace_dim0": "2 * n * q8 + n * q8 * 128 + 2 * n * k8 * 128",
                "dq_dim0": "n * seqlen_q * 128", "dk_dim0": "n * seqlen_kv * 128", "dv_dim0": "n * seqlen_kv * 128",
                "bucketed_offsets_dim0": "n * csr['groups'] * (kvb + 1)",
                "bucketed_indices_dim0": "n * csr['edge_stride']", "block_sizes_dim0": "batch * kvb",
                "edge_stride": "csr['edge_stride']",
                "softmax_scale": "1 / sqrt(128) if softmax_scale is None else softmax_scale"},
        data={"bucketed_offsets": "csr['offsets']", "bucketed_indices": "csr['indices']",
              "block_sizes": "bsa_block_sizes(batch, seqlen_kv, 64)"},
        # _build_tensor_maps: load_map over (b, h, s, 128) bf16 -- dims (128, s, heads, batch), byte strides of
        # axes 2, 1, 0, box (64, 64, 1, 1), 128B swizzle --; dq over the workspace's dq_acc plane (fp32)
        maps={"q_map": _bsa_map("q", "seqlen_q", "128", "(64, 64, 1, 1)", 3),
              "k_map": _bsa_map("k", "seqlen_kv", "128", "(64, 64, 1, 1)", 3),
              "v_map": _bsa_map("v", "seqlen_kv", "128", "(64, 64, 1, 1)", 3),
              "do_map": _bsa_map("do_in", "seqlen_q", "128", "(64, 64, 1, 1)", 3),
              "dq_map": {"tensor": "workspace", "byte_offset": "2 * n * q8 * 4", "dtype": "float32",
                         "dims": "(128, q8, num_heads, batch)",
                         "strides": "(512, q8 * 512, num_heads * q8 * 512)", "box": "(32, 64, 1, 1)",
                         "swizzle": "3"}}),
    # the blk128 twin: planes of roundup128 rows and head_dim features; tirx_launch: preprocess(o, do, lse,
    # workspace), postprocess(workspace, dq, softmax_scale) -- the one postprocess launch when the single
    # q-group writes dK/dV directly (num_q_groups == 1, which get_kernel's bucket gives for this size)
    "cudnn_sm100_bsa_backward_blk128": Recipe(
        source=_BSA.format("blk128") + ": prepare_data, _make_metadata, _workspace_layout, _new_mutable_state, "
                                       "_build_tensor_maps, tirx_launch",
        functions=("preprocess", "bwd", "postprocess"),
        let={"n": "batch * num_heads", "q128": "roundup(seqlen_q, 128)", "k128": "roundup(seqlen_kv, 128)",
             "q_blocks": "cdiv(seqlen_q, 128)", "kvb": "cdiv(seqlen_kv, 128)",
             "bucket": "bucket_size_blocks or (256 if q_blocks >= 4096 and num_heads <= 1 else "
                       "512 if q_blocks >= 2048 else 384)",
             "csr": "bsa_k2q(batch=batch, heads=num_heads, q_blocks=q_blocks, kv_blocks=kvb, maximum=kv_blocks, "
                    "bucket=bucket, mode=block_count_mode)",
             "half": "head_dim // 2"},
        values={"o_dim0": "n * seqlen_q * head_dim", "do_dim0": "n * seqlen_q * head_dim", "lse_dim0": "n * seqlen_q",
                "workspace_dim0": "2 * n * q128 + n * q128 * head_dim + 2 * n * k128 * head_dim",
                "output_dim0": "n * seqlen_q * head_dim",
                "output_scale": "1 / sqrt(head_dim) if softmax_scale is None else softmax_scale",
                "dk_output_dim0": "n * seqlen_kv * head_dim", "dv_output_dim0": "n * seqlen_kv * head_dim",
                "bucketed_offsets_dim0": "n * csr['groups'] * (kvb + 1)",
                "bucketed_indices_dim0": "n * csr['edge_stride']", "edge_stride": "csr['edge_stride']",
                "softmax_scale": "output_scale"},
        data={"bucketed_offsets": "csr['offsets']", "bucketed_indices": "csr['indices']"},
        # _build_tensor_maps (bhsd): dims (head_dim, s, heads, batch), box (features, 128, 1, 1), swizzle 128B
        # for 64 features else 64B; dk / dv over the output tensors the launch also passes as dk/dv_output
        maps={"q_map": _bsa_map("q", "seqlen_q", "head_dim", "(64, 128, 1, 1)", 3),
              "k_map": _bsa_map("k", "seqlen_kv", "head_dim", "(64, 128, 1, 1)", 3),
              "v_map": _bsa_map("v", "seqlen_kv", "head_dim", "(64, 128, 1, 1)", 3),
              "do_map": _bsa_map("do_in", "seqlen_q", "head_dim", "(64, 128, 1, 1)", 3),
              "dv_map": _bsa_map("dv_output", "seqlen_kv", "head_dim", "(half, 128, 1, 1)",
                                 "3 if half == 64 else 2"),
              "dk_map": _bsa_map("dk_output", "seqlen_kv", "head_dim", "(half, 128, 1, 1)",
                                 "3 if half == 64 else 2")}),
    # prepare_data ('unique' pattern): the rows of (index, value) pairs to sort in place; indices numbered
    # arange(rows * k) % 1000003, values random; build_tirx_args passes (indices, values) flattened
    "stable_sort_topk_by_value": Recipe(
        source="tirx_kernels/ported/flashinfer/topk/stable_sort_topk_by_value.py: prepare_data, build_tirx_args",
        values={}, data={"out_idx": "arange(num_rows * k) % 1000003"}),
}


_MSA = "tirx_kernels/ported/msa/{}.py"
_MSA_PLAN = ("msa_plan(batch=batch, seqlen_k=seqlen_k, seqlen_q=seqlen_q, blk_kv=blk_kv, head_kv=head_kv, "
             "topk=topk, qhead_per_kv=qhead_per_kv, seqlen_pattern=seqlen_pattern)")
RECIPES.update({
    # prepare_data (the key->query CSR and cu_seqlens_k), make_outputs (zeroed schedule and count), tirx_args:
    # (row_ptr, cu_seqlens_k, scheduler_metadata, work_count, total_rows, batches, target, capacity, head_kv, blk_kv)
    "msa_sparse_prepare_flat_schedule_sm100": Recipe(
        source=_MSA.format("sparse_prepare_flat_schedule") + ": prepare_data, make_outputs, tirx_args, "
                                                             "target_q_per_cta, flat_schedule_capacity",
        let={"plan": _MSA_PLAN},
        values={"total_rows": "plan['total_rows']", "num_batches": "batch", "target": "plan['target']",
                "work_capacity": "plan['work_capacity']", "num_heads_kv": "head_kv"},
        data={"k2q_row_ptr": "plan['k2q_row_ptr']", "cu_seqlens_k": "plan['cu_seqlens_k']",
              "scheduler_metadata": "full(work_capacity * 6, 0)", "work_count": "full(1, 0)"}),
    # prepare_data (CSR, edge payload, work list, sizes), make_outputs (qsplit uninitialized, split_counts
    # zeroed), tirx_args: (row_ptr, q_indices, metadata, work_count, qsplit, split_counts, cu_seqlens_q,
    # total_rows, batches, capacity, nnz_capacity, total_q, head_kv, max_seqlen_q, topk)
    "msa_sparse_prepare_fwd_split_atomic_sm100": Recipe(
        source=_MSA.format("sparse_prepare_fwd_split_atomic") + ": prepare_data, _select_blocks, _work_items, "
                                                                "make_outputs, tirx_args",
        let={"plan": _MSA_PLAN},
        values={"total_rows": "plan['total_rows']", "num_batches": "batch", "work_capacity": "plan['work_capacity']",
                "nnz_capacity": "plan['nnz_capacity']", "total_q": "plan['total_q']", "num_heads_kv": "head_kv",
                "max_seqlen_q": "plan['max_seqlen_q']",
                "k2q_row_ptr_dim0": "head_kv * (plan['total_rows'] + 1)", "k2q_q_indices_dim0": "head_kv * nnz_capacity",
                "scheduler_metadata_dim0": "work_capacity * 6", "work_count_dim0": "1",
                "k2q_qsplit_indices_dim0": "head_kv * nnz_capacity", "split_counts_dim0": "total_q * head_kv",
                "cu_seqlens_q_dim0": "batch + 1"},
        data={"k2q_row_ptr": "plan['k2q_row_ptr']", "k2q_q_indices": "plan['k2q_q_indices']",
              "scheduler_metadata": "plan['scheduler_metadata']", "work_count": "full(1, plan['work_count'])",
              "split_counts": "full(total_q * head_kv, 0)", "cu_seqlens_q": "plan['cu_seqlens_q']"}),
})

_KDA = "tirx_kernels/kda/kda_backward_packed.py"
RECIPES.update({
    # prepare_data: v, do (1, T, HV, D=128) bf16, g (1, T, HV, D) fp32, initial_state h0 and dht (N, HV, D, D)
    # fp32, cu_seqlens int64 offsets of seq_lens; setup: range_parts = _range_parts(N * HV), range_entries =
    # N * HV * range_parts, range_flags of range_entries words (+ 1 + total_chunks * HQ retry words when the
    # mega dispatch runs: not (HQ == HV, HV % 8 == 0, whole chunks)); check_range passes (v, do, h0, dht, g,
    # cu_seqlens, range_flags, range_entries)
    "kda_backward_packed": Recipe(
        source=_KDA + ": prepare_data, setup (check_range), _range_parts, _count_chunks",
        functions=("guard",),
        let={"lens": "lengths(seq_lens)", "N": "len(lens)", "T": "sum(lens)", "HV": "num_v_heads",
             "parts": "min(16, max(1, cdiv(1024, N * HV)))", "entries": "N * HV * parts",
             "mega": "not (num_qk_heads == HV and HV % 8 == 0 and chunks(lens, 64)[1])"},
        values={"v_dim0": "T * HV * 128", "do_dim0": "T * HV * 128", "g_dim0": "T * HV * 128",
                "h0_dim0": "N * HV * 128 * 128", "dht_dim0": "N * HV * 128 * 128", "cu_dim0": "N + 1",
                "flags_dim0": "entries + (1 + chunks(lens, 64)[0] * num_qk_heads if mega else 0)",
                "num_entries": "entries"},
        data={"cu": "cu_seqlens(lens, 'int64')"}),
})



_DG = "tirx_kernels/ported/deepgemm/{}.py"
_SWZ = "swizzle(head_dim)"      # txl.SW32B / SW64B / SW128B by the row's bytes

# the paged MQA logits kernels (FP8 and its FP4 twin) take the same scalars, extents and schedule data
_PAGED_MQA_VALUES = {"logits_stride": "roundup(max_context, 256)", "block_table_stride": "max_num_pages",
                     "context_lens_flat_dim0": "rows", "logits_flat_dim0": "rows * logits_stride",
                     "block_table_flat_dim0": "batch_size * max_num_pages", "indices_dim0": "batch_size",
                     "schedule_meta_flat_dim0": "(148 + 1) * 2"}
_PAGED_MQA_DATA = {"context_lens_flat": "lens",
                   "block_table_flat": "paged_block_table(batch_size, max_num_pages, num_pages)",
                   "indices": "arange(batch_size)", "schedule_meta_flat": "paged_mqa_metadata(lens, 256, 148)"}

RECIPES.update({
    # MQALogitsFP8Config (block_q = 128 // num_heads, block_kv = 256, aligned_seq_len, logits_stride);
    # prepare_data: q (seq_len, num_heads, head_dim) fp8, kv fp8 (seq_len_kv, head_dim) and its fp32 scales,
    # weights (seq_len, num_heads) fp32, ks / ke (_generate_ks_ke), max_seqlen_k = 0 unless compressed;
    # _logits_storage_shape; _build_tirx_tensor_maps (four encodes, in the parameters' order);
    # _run_tirx_invocation: (seq_len, seq_len_kv, max_seqlen_k, aligned // block_q, logits.stride(0), ks, ke,
    # logits, maps...)
    "deepgemm_sm100_fp8_mqa_logits": Recipe(
        source=_DG.format("mqa_logits_fp8") + ": MQALogitsFP8Config, prepare_data, _generate_ks_ke, "
                                               "_logits_storage_shape, _build_tirx_tensor_maps, _run_tirx_invocation",
        let={"block_q": "128 // num_heads", "block_kv": "256", "aligned": "roundup(seq_len, block_q)",
             "kske": "mqa_ks_ke(seq_len, seq_len_kv, disable_cp)"},
        values={"max_seqlen_k": "int(max(kske[1] - kske[0])) if compressed_logits else 0",
                "logits_stride": "roundup(max_seqlen_k + block_kv, block_kv) if compressed_logits "
                                 "else roundup(seq_len_kv + block_kv, 8)",
                "num_q_blocks": "aligned // block_q", "cu_seq_len_k_start_dim0": "seq_len",
                "cu_seq_len_k_end_dim0": "seq_len", "logits_flat_dim0": "aligned * logits_stride"},
        data={"cu_seq_len_k_start": "kske[0]", "cu_seq_len_k_end": "kske[1]"},
        maps={"kv_scales_map": {"tensor": "kv_scales", "shape": "(seq_len_kv,)", "dtype": "float32",
                                "dims": "(seq_len_kv,)", "box": "(block_kv,)"},
              "kv_map": {"tensor": "kv_fp8", "shape": "(seq_len_kv, head_dim)", "dtype": "uint8",
                         "dims": "(head_dim, seq_len_kv)", "strides": "(head_dim,)", "box": "(head_dim, block_kv)",
                         "swizzle": _SWZ},
              "weights_map": {"tensor": "weights", "shape": "(seq_len, num_heads)", "dtype": "float32",
                              "dims": "(num_heads, seq_len)", "strides": "(num_heads * 4,)",
                              "box": "(num_heads, block_q)"},
              "q_map": {"tensor": "q", "shape": "(seq_len * num_heads, head_dim)", "dtype": "uint8",
                        "dims": "(head_dim, seq_len * num_heads)", "strides": "(head_dim,)",
                        "box": "(head_dim, block_q * num_heads)", "swizzle": _SWZ}}),
    # the FP4 twin (MQALogitsConfig): q and kv packed two values a byte (head_dim // 2 bytes a row, 64-byte
    # swizzle), uint32 scale factors for q (seq_len, num_heads) and kv (seq_len_kv,); five maps in the
    # parameters' order; no num_q_blocks argument; the compressed stride is align(max_seqlen_k, block_kv)
    "deepgemm_sm100_fp4_mqa_logits": Recipe(
        source=_DG.format("mqa_logits_fp4") + ": MQALogitsConfig, prepare_data, _generate_ks_ke, "
                                               "_logits_storage_shape, _build_tirx_tensor_maps, _run_tirx_invocation",
        let={"block_q": "128 // num_heads", "block_kv": "256", "aligned": "roundup(seq_len, block_q)",
             "packed": "head_dim // 2", "kske": "mqa_ks_ke(seq_len, seq_len_kv, disable_cp)"},
        values={"max_seqlen_k": "int(max(kske[1] - kske[0])) if compressed_logits else 0",
                "logits_stride": "roundup(max_seqlen_k, block_kv) if compressed_logits "
                                 "else roundup(seq_len_kv + block_kv, 8)",
                "cu_seq_len_k_start_dim0": "seq_len", "cu_seq_len_k_end_dim0": "seq_len",
                "logits_flat_dim0": "aligned * logits_stride"},
        data={"cu_seq_len_k_start": "kske[0]", "cu_seq_len_k_end": "kske[1]"},
        maps={"sf_kv_map": {"tensor": "sf_kv", "shape": "(seq_len_kv,)", "dtype": "uint32",
                            "dims": "(seq_len_kv,)", "box": "(block_kv,)"},
              "kv_map": {"tensor": "kv", "shape": "(seq_len_kv, packed)", "dtype": "uint8",
                         "dims": "(packed, seq_len_kv)", "strides": "(packed,)", "box": "(packed, block_kv)",
                         "swizzle": "swizzle(64)"},
              "weights_map": {"tensor": "weights", "shape": "(seq_len, num_heads)", "dtype": "float32",
                              "dims": "(num_heads, seq_len)", "strides": "(num_heads * 4,)",
                              "box": "(num_heads, block_q)"},
              "sf_q_map": {"tensor": "sf_q", "shape": "(seq_len, num_heads)", "dtype": "uint32",
                           "dims": "(num_heads, seq_len)", "strides": "(num_heads * 4,)",
                           "box": "(num_heads, block_q)"},
              "q_map": {"tensor": "q", "shape": "(seq_len * num_heads, packed)", "dtype": "uint8",
                        "dims": "(packed, seq_len * num_heads)", "strides": "(packed,)",
                        "box": "(packed, block_q * num_heads)", "swizzle": "swizzle(64)"}}),
    # PagedMQALogitsFP8Config (max_context_len, split_kv = 256, logits_stride); _prepare_data: q (batch, next_n,
    # heads, head_dim) fp8, the fused KV cache (num_pages, page_size * (head_dim + 4)) bytes -- fp8 rows, then
    # fp32 scales per page --, weights (batch * next_n, heads), context_lens (_make_context_lens: drawn in
    # [page_size // 2, max_context_len]; here the maximum), block table (_make_block_table), the schedule
    # (deep_gemm.get_paged_mqa_logits_metadata, see paged_mqa_metadata); _build_tirx_tensor_maps (2D/3D encodes
    # of mega_moe spec._encode_tma_2d_desc / _encode_tma_3d_desc: box inner = swizzle bytes / element size);
    # _run_tirx_invocation: (batch, logits_stride, block_table.stride(0), context_lens, logits, block_table,
    # indices (empty when not varlen), schedule, maps q, kv, kv_scales, weights)
    "deepgemm_sm100_fp8_paged_mqa_logits": Recipe(
        source=_DG.format("paged_mqa_logits_fp8") + ": PagedMQALogitsFP8Config, _prepare_data, _make_context_lens, "
                                                     "_make_block_table, _build_tirx_tensor_maps, _run_tirx_invocation",
        let={"rows": "batch_size * next_n", "max_context": "max_num_pages * page_size",
             "q_rows": "(2 if varlen or next_n >= 2 else 1)", "page_bytes": "page_size * (head_dim + 4)",
             "lens": "full(rows, max_context)"},
        values=_PAGED_MQA_VALUES, data=_PAGED_MQA_DATA,
        maps={"tensor_map_q": {"tensor": "q", "shape": "(rows * num_heads * head_dim,)", "tensor_dtype": "uint8",
                               "dtype": "float8_e4m3fn", "dims": "(head_dim, rows * num_heads)",
                               "strides": "(head_dim,)", "box": "(128, q_rows * num_heads)", "swizzle": "swizzle(128)"},
              "tensor_map_kv": {"tensor": "kv_cache", "shape": "(num_pages * page_bytes,)", "tensor_dtype": "uint8",
                                "dtype": "float8_e4m3fn", "dims": "(head_dim, page_size, num_pages)",
                                "strides": "(head_dim, page_bytes)", "box": "(128, page_size, 1)",
                                "swizzle": "swizzle(128)"},
              "tensor_map_kv_scales": {"tensor": "kv_cache", "shape": "(num_pages * page_bytes,)",
                                       "tensor_dtype": "uint8", "dtype": "float32",
                                       "byte_offset": "page_size * head_dim", "dims": "(page_size, num_pages)",
                                       "strides": "(page_bytes,)", "box": "(page_size, 1)"},
              "tensor_map_weights": {"tensor": "weights", "shape": "(rows, num_heads)", "dtype": "float32",
                                     "dims": "(num_heads, rows)", "strides": "(num_heads * 4,)",
                                     "box": "(num_heads, q_rows)"}}),
    # the FP4 twin: q and the KV rows packed two values a byte (head_dim // 2 bytes, then 4 scale bytes a row
    # in the fused cache); q and kv are encoded through the CUDA driver as CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B
    # (code 13, _encode_fp4_packed_smem_tma_2d/3d_desc), sf_q / sf_kv / weights through TVM's encode
    "deepgemm_sm100_fp4_paged_mqa_logits": Recipe(
        source=_DG.format("paged_mqa_logits_fp4") + ": PagedMQALogitsFP4Config, _prepare_data, _make_context_lens, "
                                                     "_make_block_table, _build_tirx_tensor_maps, "
                                                     "_encode_fp4_packed_smem_tma_2d_desc, _run_tirx_invocation",
        let={"rows": "batch_size * next_n", "max_context": "max_num_pages * page_size",
             "q_rows": "(2 if varlen or next_n >= 2 else 1)", "packed": "head_dim // 2",
             "page_bytes": "page_size * (head_dim // 2 + 4)", "lens": "full(rows, max_context)"},
        values=_PAGED_MQA_VALUES, data=_PAGED_MQA_DATA,
        maps={"tensor_map_q": {"tensor": "q", "shape": "(rows * num_heads * packed,)", "tensor_dtype": "uint8",
                               "dtype": "16U4_ALIGN8B", "dims": "(head_dim, rows * num_heads)",
                               "strides": "(packed,)", "box": "(head_dim, q_rows * num_heads)",
                               "swizzle": "swizzle(packed)"},
              "tensor_map_sf_q": {"tensor": "sf_q", "shape": "(rows, num_heads)", "dtype": "int32",
                                  "dims": "(num_heads, rows)", "strides": "(num_heads * 4,)",
                                  "box": "(num_heads, q_rows)"},
              "tensor_map_kv": {"tensor": "kv_cache", "shape": "(num_pages * page_bytes,)", "tensor_dtype": "uint8",
                                "dtype": "16U4_ALIGN8B", "dims": "(head_dim, page_size, num_pages)",
                                "strides": "(packed, page_bytes)", "box": "(head_dim, page_size, 1)",
                                "swizzle": "swizzle(packed)"},
              "tensor_map_sf_kv": {"tensor": "kv_cache", "shape": "(num_pages * page_bytes,)", "tensor_dtype": "uint8",
                                   "dtype": "int32", "byte_offset": "page_size * packed",
                                   "dims": "(page_size, num_pages)", "strides": "(page_bytes,)",
                                   "box": "(page_size, 1)"},
              "tensor_map_weights": {"tensor": "weights", "shape": "(rows, num_heads)", "dtype": "float32",
                                     "dims": "(num_heads, rows)", "strides": "(num_heads * 4,)",
                                     "box": "(num_heads, q_rows)"}}),
})


def _fa_row5(tensor: str, rows: str) -> dict[str, str]:
    """flash_attention_backward.py build_tensor_maps `row5`: (d/2, s, 2, h, b) fp16 over a (B, S, H, D) tensor."""
    return {"tensor": tensor, "dtype": "float16", "dims": "(D // 2, S, 2, H, B)",
            "strides": "(H * D * 2, D, D * 2, S * H * D * 2)", "box": f"(D // 2, {rows}, 2, 1, 1)", "swizzle": "3"}


def _fa_col4(tensor: str, cols: str, rows: str) -> dict[str, str]:
    """`col4`: (d, s, h, b) fp16 over a (B, S, H, D) tensor."""
    return {"tensor": tensor, "dtype": "float16", "dims": "(D, S, H, B)",
            "strides": "(H * D * 2, D * 2, S * H * D * 2)", "box": f"({cols}, {rows}, 1, 1)", "swizzle": "3"}


_FA = "tirx_kernels/ported/flashattention/flash_attention_backward.py"
RECIPES.update({
    # _prepare_official_workload: Q, K, V, dO, dQ/dK/dV (B, S, H, D) fp16, LSE (B, H, S) fp32; setup: dpsum and
    # LSE_log2 (B, H, S) fp32, dQ_acc (B, H, S, D) fp32, core_args (Q, K, V, dO, LSE_log2, dpsum, dK, dV, dQ_acc,
    # the ten maps of build_tensor_maps over those tensors, in parameter order)
    "flash_attention_backward_sm100": Recipe(
        source=_FA + ": _prepare_official_workload, setup, build_tensor_maps",
        let={"B": "batch_size", "S": "seq_len", "H": "num_heads", "D": "head_dim"},
        values={"Q_g_dim0": "B * S * H * D", "K_g_dim0": "B * S * H * D", "V_g_dim0": "B * S * H * D",
                "dO_g_dim0": "B * S * H * D", "LSE_g_dim0": "B * H * S", "dpsum_g_dim0": "B * H * S",
                "dK_g_dim0": "B * S * H * D", "dV_g_dim0": "B * S * H * D", "dQ_acc_g_dim0": "B * H * S * D"},
        maps={"q_row_map": _fa_row5("Q_g", "64"), "q_col_map": _fa_col4("Q_g", "D // 2", "128"),
              "k_row_map": _fa_row5("K_g", "128"), "k_col_map": _fa_col4("K_g", "D // 2", "256"),
              "v_row_map": _fa_row5("V_g", "128"), "do_row_map": _fa_row5("dO_g", "64"),
              "do_col_map": _fa_col4("dO_g", "D // 2", "128"), "dk_map": _fa_col4("dK_g", "64", "128"),
              "dv_map": _fa_col4("dV_g", "64", "128"),
              "dq_map": {"tensor": "dQ_acc_g", "dtype": "float32", "dims": "(D, S, H, B)",
                         "strides": "(D * 4, S * D * 4, H * S * D * 4)", "box": "(D, 8, 1, 1)"}}),
})

RECIPES.update({
    # _make_kernel (qstage1_1cta: one 128-row q tile per plan row; scheduled heads = hq unless pack_gqa; plan rows
    # = mask_heads * total_m_blocks, max_blocks = kv_blocks), prepare_data (the plan of cudnn's create_mask_plan,
    # padded to plan_item_capacity; zero sequence_desc for the fixed layout; scale = head_dim ** -0.5 unless
    # configured), _tirx_launch (..., softmax_scale * _LOG2_E).  Only the `full` mask, fixed layout.
    "cudnn_sm103_flex_attention_forward": Recipe(
        source="tirx_kernels/ported/cudnn/flex_attention/forward_sm103.py: _make_kernel, prepare_data, _tirx_launch",
        let={"q_blocks": "cdiv(seqlen_q, 128)", "rows": "mask_heads * batch * q_blocks",
             "plan": "flex_full_plan(rows=rows, kv_blocks=cdiv(seqlen_kv, 128), capacity=rows * kv_blocks) "
                     "if mask_pattern == 'full' and layout == 'fixed' and variant == 'qstage1_1cta' else None"},
        values={"softmax_scale_log2": "(head_dim ** -0.5 if softmax_scale is None else softmax_scale) * LOG2_E"},
        data={"partial_count": "plan['partial_count']", "partial_offset": "plan['partial_offset']",
              "partial_index": "plan['partial_index']", "full_count": "plan['full_count']",
              "full_offset": "plan['full_offset']", "full_index": "plan['full_index']",
              "sequence_desc": "full(batch * 8, 0)",
              "fwd_work_desc": "flex_work(batch=batch, heads=num_kv_heads if pack_gqa else num_q_heads, "
                               "q_blocks=q_blocks)"}),
    # _lengths_for_config (fixed: one sequence of `seqlen`), prepare_data: q, k, v (batch, seqlen, heads, 256),
    # out alike, lse (batch, hq, seqlen), dummy cu_q / cu_k (batch + 1 zeros) in the fixed layout, the plan of
    # create_mask_plan (see flex_causal_plan), softmax_scale = 1 / 16; _tirx_launch passes (..., scale *
    # _LOG2_E, scale).  Only the causal mask, fixed layout, cta_group 1, one mask for all heads.
    "cudnn_sm100_flex_attention_forward_hd256": Recipe(
        source="tirx_kernels/ported/cudnn/flex_attention/forward_hd256_sm100.py: _lengths_for_config, "
               "_make_kernel, prepare_data, _tirx_launch",
        let={"B": "1", "plan": "flex_causal_plan(lengths=[seqlen], heads=num_q_heads) if mask == 'causal' and "
                               "sequence_mode == 'fixed' and cta_group_size == 1 and not per_head_mask else None"},
        values={"q_dim0": "B * seqlen * num_q_heads * 256", "k_dim0": "B * seqlen * num_kv_heads * 256",
                "v_dim0": "B * seqlen * num_kv_heads * 256", "out_dim0": "B * seqlen * num_q_heads * 256",
                "lse_dim0": "B * num_q_heads * seqlen", "cu_q_dim0": "B + 1", "cu_k_dim0": "B + 1",
                "sequence_desc_dim0": "len(plan['sequence_desc'])", "mask_block_cnt_dim0": "len(plan['mask_block_cnt'])",
                "mask_block_offset_dim0": "len(plan['mask_block_offset'])",
                "mask_block_idx_dim0": "len(plan['mask_block_idx'])", "full_block_cnt_dim0": "len(plan['full_block_cnt'])",
                "full_block_offset_dim0": "len(plan['full_block_offset'])",
                "full_block_idx_dim0": "len(plan['full_block_idx'])", "mask_payload_dim0": "len(plan['mask_payload'])",
                "fwd_work_desc_dim0": "len(plan['fwd_work_desc'])", "softmax_scale": "1 / 16",
                "softmax_scale_log2": "LOG2_E / 16"},
        data={"cu_q": "full(B + 1, 0)", "cu_k": "full(B + 1, 0)", "sequence_desc": "plan['sequence_desc']",
              "mask_block_cnt": "plan['mask_block_cnt']", "mask_block_offset": "plan['mask_block_offset']",
              "mask_block_idx": "plan['mask_block_idx']", "full_block_cnt": "plan['full_block_cnt']",
              "full_block_offset": "plan['full_block_offset']", "full_block_idx": "plan['full_block_idx']",
              "mask_payload": "plan['mask_payload']", "fwd_work_desc": "plan['fwd_work_desc']"}),
})


def recipe_for(module: str, function: str) -> Recipe | None:
    candidates = (RECIPES[module],) if module in RECIPES else ()
    return next((r for r in candidates + EXTRA_RECIPES.get(module, ()) if r.covers(function)), None)


# the MSA forward trio, the KDA fused backward and the GDN fixups, in their own module (it reads the names above)
from benchmarks.corpus.recipes_more import EXTRA_RECIPES, MORE_RECIPES  # noqa: E402

RECIPES.update(MORE_RECIPES)
