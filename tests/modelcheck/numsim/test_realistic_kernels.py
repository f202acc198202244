"""Realistic kernels of issue 8 against numpy references written from the math.

- kernels/gemm_persistent.py (K1 grown up): D = A . B^T of bf16 operands, compared with the
  float64 product; each output element is one fp32 rounding per MMA (K / 16 of them) away from
  the exact sum, so the bound is (K / 16 + 1) eps_fp32 |A| |B|^T elementwise.
- kernels/gdn_prefill.py (K6 slice): the gated delta rule, compared with the token-by-token
  float64 recurrence of kernels/inputs/gdn.py:reference (not the kernel's chunked form).
"""
from __future__ import annotations

import difflib
import importlib.util

import numpy as np
import pytest

import modelcheck
from modelcheck import numsim
from tests.manifest import INPUT_BUILDERS, KERNELS


def _inputs_module(name: str):
    spec = importlib.util.spec_from_file_location(f"_inputs_{name}", INPUT_BUILDERS / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


GEMM = _inputs_module("gemm_persistent")


def _body(path, fname: str) -> list[str]:
    text = path.read_text()
    return text[text.index("from tvm_tirx.script"):].replace(f"def {fname}(", "def NAME(").splitlines()


# --------------------------------------------------------------------------- persistent GEMM

@pytest.mark.parametrize("consts", [{}, {"NUM_CTAS": 1, "TILES_PER_CTA": 4, "K_TILES": 3, "STAGES": 2}],
                         ids=["default", "one_cta_4_tiles"])
def test_gemm_persistent_matches_the_fp64_product(consts):
    kernel = modelcheck.load(KERNELS / "gemm_persistent.py", **consts)
    c = kernel.constants
    res = numsim.run(kernel.func, numsim.default_inputs(kernel.func, GEMM.gemm_persistent(dict(c), seed=3)))
    assert res.verdict == "clean" and res.termination == "completed", res.diagnostics
    a, b = (x.astype(np.float64) for x in GEMM.operands(dict(c), seed=3))
    ref = GEMM.reference(dict(c), seed=3)
    got = res.outputs["D"]
    # every tile was stored (D starts as NaN) and each CTA walked TILES_PER_CTA of them
    assert not np.isnan(got).any()
    assert c["TILES_M"] * c["TILES_N"] == c["NUM_CTAS"] * c["TILES_PER_CTA"]
    bound = (c["K"] // 16 + 1) * np.finfo(np.float32).eps * (np.abs(a) @ np.abs(b).T)
    assert (np.abs(got - ref) <= bound).all()


def test_gemm_persistent_bound_sees_a_swapped_accumulator():
    """The bound is tight enough to tell tiles apart: D with two of its tiles exchanged fails it."""
    c = modelcheck.load(KERNELS / "gemm_persistent.py").constants
    ref = GEMM.reference(dict(c), seed=3)
    a, b = (x.astype(np.float64) for x in GEMM.operands(dict(c), seed=3))
    bound = (c["K"] // 16 + 1) * np.finfo(np.float32).eps * (np.abs(a) @ np.abs(b).T)
    swapped = ref.copy()
    bm, bn = c["BM"], c["BN"]
    swapped[:bm, :bn], swapped[:bm, bn:2 * bn] = ref[:bm, bn:2 * bn], ref[:bm, :bn]
    assert not (np.abs(swapped - ref) <= bound).all()


def _diff(clean: list[str], buggy: list[str]) -> tuple[list[str], list[str]]:
    """(lines only in clean, lines only in buggy), stripped, from a line diff."""
    out = ([], [])
    for line in difflib.ndiff(clean, buggy):
        if line[:2] in ("- ", "+ "):
            out[line[0] == "+"].append(line[2:].strip())
    return out


def test_gemm_persistent_bug_twin_only_drops_the_tmem_empty_wait():
    removed, added = _diff(_body(KERNELS / "gemm_persistent.py", "gemm_persistent"),
                           _body(KERNELS / "gemm_persistent_acc_reuse.py", "gemm_persistent_acc_reuse"))
    assert removed == ["# accumulator t % 2 is free once the epilogue drained the tile two back",
                       "T.cuda.mbarrier_wait(tmem_empty.ptr_to([t % ACC_STAGES]), (t // ACC_STAGES + 1) % 2)",
                       "T.ptx.tcgen05.fence__after_thread_sync()"]
    assert added == ["# BUG: no tmem_empty wait: accumulator t % 2 may still be drained for tile t - 2"]
