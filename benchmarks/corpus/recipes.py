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

from benchmarks.corpus.recipe_data import msa_plan

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


def concat(*parts) -> np.ndarray:
    return np.concatenate([np.asarray(p).reshape(-1) for p in parts])


HELPERS: dict[str, Any] = {"roundup": roundup, "cdiv": cdiv, "arange": arange, "full": full,
                           "cu_seqlens": cu_seqlens, "lengths": lengths, "chunks": chunks, "concat": concat,
                           "sqrt": math.sqrt, "log2": math.log2, "LOG2_E": LOG2_E, "min": min, "max": max,
                           "sum": sum, "len": len, "int": int, "float": float, "None": None,
                           "True": True, "False": False, "msa_plan": msa_plan}

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


def _names(expr: str) -> set[str]:
    try:
        return {n.id for n in ast.walk(ast.parse(str(expr).strip(), mode="eval")) if isinstance(n, ast.Name)}
    except SyntaxError:
        return set()


_BSA = "tirx_kernels/ported/cudnn/bsa/_block_sparse_attention_backward_sm100_{}/data.py"

RECIPES: dict[str, Recipe] = {
    # prepare_data: o = the forward's output (batch, heads, seqlen_q, 128) bf16, lse (batch, heads, seqlen_q)
    # fp32; _workspace_layout: five fp32 planes of roundup8 rows; tirx_launch: sum_odo(o, do, lse, workspace),
    # convert(workspace, dq, dk, dv, softmax_scale) with softmax_scale = 1/sqrt(128) unless configured
    "cudnn_sm100_bsa_backward_blk64": Recipe(
        source=_BSA.format("blk64") + ": prepare_data, _workspace_layout, _new_mutable_state, tirx_launch",
        functions=("sum_odo", "convert"),
        let={"n": "batch * num_heads", "q8": "roundup(seqlen_q, 8)", "k8": "roundup(seqlen_kv, 8)"},
        values={"o_dim0": "n * seqlen_q * 128", "do_dim0": "n * seqlen_q * 128", "lse_dim0": "n * seqlen_q",
                "workspace_dim0": "2 * n * q8 + n * q8 * 128 + 2 * n * k8 * 128",
                "dq_dim0": "n * seqlen_q * 128", "dk_dim0": "n * seqlen_kv * 128", "dv_dim0": "n * seqlen_kv * 128",
                "softmax_scale": "1 / sqrt(128) if softmax_scale is None else softmax_scale"}),
    # the blk128 twin: planes of roundup128 rows and head_dim features; tirx_launch: preprocess(o, do, lse,
    # workspace), postprocess(workspace, dq, softmax_scale) -- the one postprocess launch when the single
    # q-group writes dK/dV directly (num_q_groups == 1, which get_kernel's bucket gives for this size)
    "cudnn_sm100_bsa_backward_blk128": Recipe(
        source=_BSA.format("blk128") + ": prepare_data, _workspace_layout, _new_mutable_state, tirx_launch",
        functions=("preprocess", "postprocess"),
        let={"n": "batch * num_heads", "q128": "roundup(seqlen_q, 128)", "k128": "roundup(seqlen_kv, 128)"},
        values={"o_dim0": "n * seqlen_q * head_dim", "do_dim0": "n * seqlen_q * head_dim", "lse_dim0": "n * seqlen_q",
                "workspace_dim0": "2 * n * q128 + n * q128 * head_dim + 2 * n * k128 * head_dim",
                "output_dim0": "n * seqlen_q * head_dim",
                "output_scale": "1 / sqrt(head_dim) if softmax_scale is None else softmax_scale"}),
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


def recipe_for(module: str, function: str) -> Recipe | None:
    r = RECIPES.get(module)
    return r if r is not None and r.covers(function) else None
