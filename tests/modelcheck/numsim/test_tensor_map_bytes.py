"""Reading a tensor-map parameter's own bytes is unmodeled (the CUtensorMap layout is opaque): incomplete,
naming the op and its line -- not an out-of-bounds error."""
from __future__ import annotations

from pathlib import Path

import numpy as np

import ir
import modelcheck
from modelcheck.numsim import TensorMap

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "tma" / "tensor_map_bytes_pre.py"


def test_reading_a_tensor_maps_bytes_is_incomplete():
    data = np.zeros(64 * 64, np.float16)
    m = TensorMap(data, [64, 64], [128], [64, 8], [1, 1], "float16").numpy()
    report = modelcheck.synccheck(ir.parse_file(FIXTURE), {"m": m, "out": np.zeros(1, np.uint64)})
    assert report.verdict == "incomplete"
    (f,) = [f for f in report.findings if f.kind == "analysis_incomplete"]
    assert "tensor-map parameter" in f.message and "tensor_map_bytes_pre.py:14:" in f.message
