"""Launch recipes (benchmarks/corpus/recipes.py): inputs the library's launch code builds, written down per module,
for corpus functions whose capture failed -- extents and scalars from the configuration, valid index data."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import ir
import modelcheck
from benchmarks.corpus import check, recipes
from benchmarks.corpus.check import make_inputs
from benchmarks.corpus.recipes import RECIPES, Recipe, RecipeError, evaluate

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "recipes" / "csr_rows.pre.py"
CONFIG = {"rows": 4, "per_row": 3, "width": 16}
# the index record of the fixture's parameters, as benchmarks/corpus/build.py writes it
FREC = {"function": "csr_rows", "pre": "m/csr_rows.pre.py", "captured": {"why": "run_test needs CUDA"},
        "params": [{"name": "row_ptr", "kind": "buffer", "dtype": "int32", "shape": ["num_rows + 1"]},
                   {"name": "cols", "kind": "buffer", "dtype": "int32", "shape": ["cols_dim0"]},
                   {"name": "x", "kind": "buffer", "dtype": "float32", "shape": ["x_dim0"]},
                   {"name": "out", "kind": "buffer", "dtype": "float32", "shape": ["num_rows"]},
                   {"name": "num_rows", "kind": "scalar", "dtype": "PrimType"}]}
RECIPE = Recipe(source="tests/fixtures/recipes/csr_rows.pre.py: its header",
                let={"nnz": "rows * per_row"},
                values={"num_rows": "rows", "cols_dim0": "nnz", "x_dim0": "width"},
                data={"row_ptr": "cu_seqlens([per_row] * rows)", "cols": "arange(nnz) % width"})


def test_recipe_binds_extents_scalars_and_valid_index_data():
    inputs, problems = make_inputs(FREC, CONFIG, "random", RECIPE)
    assert problems == []
    assert inputs["num_rows"] == 4
    assert inputs["row_ptr"].tolist() == [0, 3, 6, 9, 12]          # an extent printed as `num_rows + 1`
    assert inputs["cols"].shape == (12,) and inputs["cols"].max() < 16
    assert inputs["x"].shape == (16,) and inputs["out"].shape == (4,)
    func = ir.parse_file(FIXTURE)
    assert modelcheck.racecheck(func, inputs, max_seconds=30).verdict == "clean"
    assert modelcheck.synccheck(func, inputs, max_seconds=30).verdict == "clean"


def test_without_the_index_data_the_gather_reads_out_of_bounds():
    """Why `data` exists: the harness's random fill of the CSR is not a CSR, and the checkers say so."""
    inputs, problems = make_inputs(FREC, CONFIG, "random", Recipe(source="s", let=RECIPE.let, values=RECIPE.values))
    assert problems == []
    report = modelcheck.racecheck(ir.parse_file(FIXTURE), inputs, max_seconds=30)
    assert report.verdict == "error" and {f.kind for f in report.findings} == {"oob"}


def test_without_a_recipe_the_unbound_extents_are_named():
    _, problems = make_inputs(FREC, CONFIG, "zeros")
    assert "extent cols_dim0 of cols is not bound by the configuration" in problems
    assert "scalar parameter num_rows has no value in the configuration" in problems


def test_a_broken_recipe_is_a_named_problem_not_a_traceback():
    bad = Recipe(source="s", values={"num_rows": "rows.bit_length()", "cols_dim0": "missing * 2", "x_dim0": "1/0"},
                 data={"row_ptr": "arange(3)"})
    _, problems = make_inputs(FREC, CONFIG, "zeros", bad)
    text = "\n".join(problems)
    assert "launch recipe value num_rows: `rows.bit_length()`: Attribute is not allowed" in text
    assert "launch recipe value cols_dim0: `missing * 2`: missing has no value" in text
    assert "launch recipe value x_dim0: `1/0`: ZeroDivisionError" in text
    with pytest.raises(RecipeError, match="Attribute is not allowed"):
        evaluate("().__class__", {})


def test_check_one_says_the_inputs_were_read_from_the_launch_code(tmp_path, monkeypatch):
    (tmp_path / "m").mkdir()
    shutil.copy(FIXTURE, tmp_path / "m" / "csr_rows.pre.py")
    index = {"modules": [{"module": "m", "arch": "sm_100a", "config": dict(CONFIG, label="c0"), "functions": [FREC]}]}
    (tmp_path / "index.json").write_text(json.dumps(index))
    monkeypatch.setitem(RECIPES, "m", RECIPE)
    rec = check.check_one(tmp_path, "m", "csr_rows", "pre", "check")
    assert rec["inputs_from"].startswith("the library's launch code (read): tests/fixtures/recipes/")
    assert "not_checked" not in rec
    assert rec["synccheck_zeros"]["verdict"] == rec["racecheck_random"]["verdict"] == "clean"
    table = check.markdown_table({"rows": [dict(rec, parsed=True)]})
    assert "| m / csr_rows | read |" in table


ALL = [(m, r) for m, r in sorted(RECIPES.items())] + \
    [(m, r) for m, extra in sorted(recipes.EXTRA_RECIPES.items()) for r in extra]


@pytest.mark.parametrize("module, r", ALL, ids=[f"{m}:{','.join(r.functions) or '*'}" for m, r in ALL])
def test_every_entry_cites_its_source_and_uses_only_allowed_expressions(module, r):
    assert r.source.startswith("tirx_kernels/") and ".py: " in r.source
    for expr in (*r.let.values(), *r.values.values(), *r.data.values()):
        try:
            evaluate(expr, {})
        except RecipeError as err:
            assert "has no value" in str(err) or "Error" in str(err), err    # names only: allowed nodes
    site = Path.home() / ".cache/modelcheck/corpus-venv/lib/python3.11/site-packages"
    if site.is_dir():
        assert (site / r.source.partition(":")[0]).is_file(), r.source


def test_builders():
    assert recipes.cu_seqlens([2, 0, 3]).tolist() == [0, 2, 2, 5]
    assert recipes.lengths("(1024, 1024)") == (1024, 1024)
    assert recipes.roundup(129, 128) == 256 and recipes.cdiv(129, 128) == 2
    assert np.array_equal(recipes.concat([1], np.array([2, 3])), [1, 2, 3])


def test_msa_plan_is_a_valid_csr_within_its_capacities():
    from benchmarks.corpus.recipe_data import msa_plan
    plan = msa_plan(batch=3, seqlen_k=1024, seqlen_q=1024, blk_kv=128, head_kv=2, topk=4, qhead_per_kv=4,
                    seqlen_pattern="varlen")
    assert plan["seqlens_k"] == [1024, 768, 512] and plan["total_q"] == 2304
    row_ptr = plan["k2q_row_ptr"]
    assert row_ptr.shape == (2, plan["total_rows"] + 1) and (np.diff(row_ptr, axis=1) >= 0).all()
    assert row_ptr[0, -1] == plan["nnz"] <= plan["nnz_capacity"]
    q = plan["k2q_q_indices"][0, : plan["nnz"]]
    assert q.min() >= 0 and q.max() < plan["max_seqlen_q"] and (plan["k2q_q_indices"][0, plan["nnz"]:] == -1).all()
    work = plan["scheduler_metadata"][: plan["work_count"]]
    assert plan["work_count"] <= plan["work_capacity"] and (work[:, 3] > 0).all() and (work[:, 3] <= plan["target"]).all()
    assert plan["cu_seqlens_q"].tolist() == [0, 1024, 1792, 2304]


def test_paged_schedule_deals_segments_to_sms_and_ends_at_the_batch():
    from benchmarks.corpus.recipe_data import paged_block_table, paged_mqa_metadata
    meta = paged_mqa_metadata([256, 600], 256, 3)          # 1 + 3 segments over 3 SMs: 2, 1, 1
    assert meta.tolist() == [[0, 0], [1, 1], [1, 2], [2, 0]]
    assert paged_block_table(2, 3, 4).tolist() == [[0, 1, 2], [3, 0, 1]]


def test_recipe_maps_read_their_buffer_or_a_shared_host_tensor():
    frec = {"params": [{"name": "x", "kind": "buffer", "dtype": "float32", "shape": ["n"]},
                       {"name": "x_map", "kind": "tensor_map"}, {"name": "h_map", "kind": "tensor_map"},
                       {"name": "bad_map", "kind": "tensor_map"}, {"name": "fp4_map", "kind": "tensor_map"}]}
    recipe = Recipe(source="s", values={"n": "64"}, maps={
        "x_map": {"tensor": "x", "dtype": "float32", "dims": "(16, 4)", "strides": "(64,)", "box": "(16, 2)"},
        "h_map": {"tensor": "h", "shape": "(8, 8)", "dtype": "float32", "dims": "(8, 8)", "strides": "(32,)",
                  "box": "(8, 8)", "byte_offset": "0"},
        "bad_map": {"tensor": "h", "shape": "(8, 8)", "dtype": "16U6_ALIGN16B", "dims": "(8, 8)",
                    "strides": "(32,)", "box": "(8, 8)"},
        "fp4_map": {"tensor": "p", "shape": "(256,)", "tensor_dtype": "uint8", "dtype": "16U4_ALIGN8B",
                    "dims": "(64, 8)", "strides": "(32,)", "box": "(64, 8)"}})
    inputs, problems = make_inputs(frec, {}, "zeros", recipe)
    assert set(inputs) == {"x", "x_map", "h_map", "fp4_map"}
    assert problems == ["launch recipe map bad_map: element type 16U6_ALIGN16B is not modeled by NumSim's tensor "
                        "maps (uint8, int8, uint16, int16, uint32, int32, uint64, int64, float16, bfloat16, float32, "
                        "float64, float8_e4m3fn, float8_e5m2, float4_e2m1fn, 16U4_ALIGN8B)"]


def test_a_function_gets_only_the_maps_among_its_parameters():
    frec = {"params": [{"name": "x", "kind": "buffer", "dtype": "float32", "shape": [64]}]}
    recipe = Recipe(source="s", values={}, maps={"x_map": {"tensor": "x", "dtype": "float32", "dims": "(64,)",
                                                           "box": "(16,)"}})
    inputs, problems = make_inputs(frec, {}, "zeros", recipe)
    assert problems == [] and set(inputs) == {"x"}


def test_flex_full_plan_sees_every_block_as_full_and_the_queue_every_tile_once():
    from benchmarks.corpus.recipe_data import flex_full_plan, flex_work
    plan = flex_full_plan(rows=2, kv_blocks=3, capacity=8)
    assert plan["full_count"].tolist() == [3, 3] and plan["full_offset"].tolist() == [0, 3, 6]
    assert plan["full_index"].tolist() == [0, 1, 2, 0, 1, 2, 0, 0] and not plan["partial_count"].any()
    assert flex_work(batch=1, heads=2, q_blocks=1).tolist() == [0, 0, 0, 0, 0, 1, 0, 0]


def test_flex_causal_plan_marks_the_diagonal_block_partial_with_causal_keep_bits():
    from benchmarks.corpus.recipe_data import flex_causal_plan
    plan = flex_causal_plan(lengths=[129], heads=2)
    assert plan["mask_block_cnt"].tolist() == [1, 1] and plan["mask_block_idx"].tolist() == [0, 1]
    assert plan["full_block_cnt"].tolist() == [0, 1] and plan["full_block_offset"].tolist() == [0, 0, 1]
    words = plan["mask_payload"].reshape(2, 128, 4)
    assert words[0, 0].tolist() == [1, 0, 0, 0] and words[0, 127].tolist() == [0xFFFFFFFF] * 4
    assert words[1, 0].tolist() == [1, 0, 0, 0] and words[1, 5].tolist() == [1, 0, 0, 0]   # column 128 only
    assert plan["fwd_work_desc"].reshape(-1, 4).tolist() == [[0, 0, 0, 128], [1, 0, 0, 1], [0, 1, 0, 128],
                                                             [1, 1, 0, 1]]


def test_a_module_may_have_one_recipe_per_function():
    assert recipes.recipe_for("kda_backward_packed", "guard") is RECIPES["kda_backward_packed"]
    fused = recipes.recipe_for("kda_backward_packed", "kda_bwd_fused")
    assert fused is not None and "q_map" in fused.maps
    assert recipes.recipe_for("gdn_cp_prefill_sm100", "fixup_utcmma__1").maps["local_state_map"]["box"] == \
        "(32, 64, 1, 1)"
    assert recipes.recipe_for("gdn_cp_prefill_sm100", "prefill") is None


def test_inputs_past_the_memory_budget_are_named_not_allocated():
    """A recipe that binds a 6 GB buffer (the MSA combine at its registry size) is a named problem."""
    big = Recipe(source="s", values=dict(RECIPE.values, x_dim0="2 ** 31"), data=RECIPE.data, let=RECIPE.let)
    inputs, problems = make_inputs(FREC, CONFIG, "random", big)
    assert inputs == {} and len(problems) == 1
    assert problems[0].startswith("the inputs need 8.0 GB (x 8.00 GB") and "2048 MB a check is given" in problems[0]


def test_msa_split_slots_number_each_querys_edges_in_csr_order():
    from benchmarks.corpus.recipe_data import msa_plan
    plan = msa_plan(batch=2, seqlen_k=512, seqlen_q=512, blk_kv=128, head_kv=2, topk=3, qhead_per_kv=4,
                    seqlen_pattern="varlen")
    nnz, qs = plan["nnz"], plan["k2q_qsplit_indices"]
    assert (qs[0] == qs[1]).all() and (qs[:, nnz:] == -1).all()
    assert ((qs[0, :nnz] & 0xFFFFFF) == plan["k2q_q_indices"][0, :nnz]).all()
    rows = np.repeat(np.arange(plan["total_rows"]), np.diff(plan["k2q_row_ptr"][0]))
    seen: dict[int, list[int]] = {}
    batch = {int(r): int(b) for _, r, _, _, b, _ in plan["scheduler_metadata"][: plan["work_count"]]}
    for e in range(nnz):
        q_abs = int(plan["cu_seqlens_q"][batch[int(rows[e])]]) + int(qs[0, e] & 0xFFFFFF)
        seen.setdefault(q_abs, []).append(int(qs[0, e]) >> 24)
    assert all(slots == list(range(len(slots))) for slots in seen.values())
    degrees = plan["split_counts"]
    assert degrees.shape == (plan["total_q"], 2) and degrees[:, 0].sum() == nnz and degrees.max() <= 3
    assert all(degrees[q, 0] == len(seen[q]) for q in seen)


def test_fast_divmod_divides_as_the_kernel_reads_it():
    from benchmarks.corpus.recipe_data import fast_divmod
    for d in (1, 3, 8, 16, 40):
        mul, s1, s2 = fast_divmod(d)
        i = np.arange(0, 200000, 7, dtype=np.uint64)
        hi = (i * np.uint64(mul)) >> np.uint64(32)
        quot = (((i - hi) >> np.uint64(s1)) + hi) >> np.uint64(s2)
        assert (quot == i // np.uint64(d)).all()


def test_kda_schedule_covers_every_chain_once_per_pass():
    from benchmarks.corpus.recipe_data import kda_schedule
    sched = kda_schedule(768, 148)
    assert (sched["maxp2"], sched["maxp1"]) == (6, 7)        # the printed kernels' 15-int rows
    table = sched["table"].reshape(148, 15)
    p2 = [c for row in table for c in row[2: 2 + row[0]]]
    p1 = [c for row in table for c in row[8: 8 + row[1]]]
    assert sorted(p2) == sorted(p1) == list(range(768))


def test_flex_bwd_causal_plan_lists_the_visible_q_blocks_of_each_key_block():
    """q 129 x k 257, causal from the top left: key block 0 sees q blocks 0 (diagonal) and 1 (one live row),
    key block 1 only q block 1 (query 128 keeps key 128), key block 2 nothing; tails make every block partial."""
    from benchmarks.corpus.recipe_data import flex_bwd_causal_plan
    plan = flex_bwd_causal_plan(q_len=129, k_len=257, rows=1)
    assert plan["partial_count"].tolist() == [2, 1, 0] and plan["full_count"].tolist() == [0, 0, 0]
    assert plan["partial_offset"].tolist() == [0, 2, 3] and plan["partial_index"].tolist() == [0, 1, 1]
    words = plan["packed_mask"].reshape(3, 256, 2)
    assert words[0, 0].tolist() == [0xFFFFFFFF, 0xFFFFFFFF]          # key 0 is kept by every query
    assert words[0, 1, 0] == 0xFFFFFFFE                              # key 1: not by query 0
    assert words[1, 0].tolist() == [1, 0] and words[1, 128].tolist() == [0, 0]   # only query 128 is live
    assert words[2, 0].tolist() == [1, 0] and words[2, 1].tolist() == [0, 0]     # key 128 by query 128
    full = flex_bwd_causal_plan(q_len=256, k_len=128, rows=2)
    assert full["full_count"].tolist() == [1, 1] and full["partial_count"].tolist() == [1, 1]
