"""`T.call_pure_extern(dtype, name, ...)` in TVM's lowered form: CUDA math functions are the TIRx math
intrinsics (same values as numpy); any other external function stays unmodeled and named."""
from __future__ import annotations

from pathlib import Path

import numpy as np

import ir
import modelcheck
from modelcheck import numsim

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "extern" / "extern_calls_lowered.py"


def _inputs():
    x = np.linspace(-2, 2, 32, dtype=np.float32)
    return {"x_ptr": x, "out_ptr": np.zeros(32, np.float32), "bits_ptr": np.arange(32, dtype=np.uint32)}


def test_cuda_math_externs_compute_as_numpy():
    res = numsim.run(ir.parse_file(FIXTURE), _inputs())
    x = _inputs()["x_ptr"]
    np.testing.assert_allclose(res.outputs["out_ptr"], np.exp(x) + np.abs(x) * np.float32(0.5), rtol=1e-6)


def test_other_externs_stay_named_and_unmodeled():
    func = ir.parse_file(FIXTURE)
    names = [n.name for n in ir.walk(func.body) if isinstance(n, ir.Unsupported)]
    assert names == ["call_pure_extern __popc"]
    report = modelcheck.synccheck(func, _inputs())      # never reached on these inputs: review, named
    assert "unsupported_operation_not_reached" in {f.kind for f in report.findings}
    assert any("__popc" in f.message for f in report.findings)
