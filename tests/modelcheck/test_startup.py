"""Start-up stays light (issue 19): `import modelcheck`, `modelcheck --version` and `modelcheck parse` load
neither numpy nor ml_dtypes (the simulator and the checkers load on first use) nor importlib.metadata (the
version is looked up when asked for), and the facade's functions
named like packages (synccheck, racecheck, replay) keep their names when those packages load."""
from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import numpy as np

import modelcheck
from modelcheck.numsim.values import NP_DTYPE, LazyTypes

ROOT = Path(__file__).resolve().parents[2]
PROBE = ("import sys\n"
         "sys.argv = ['modelcheck'] + sys.argv[1:]\n"
         "from modelcheck.cli import main\n"
         "code = main(sys.argv[1:])\n"
         "heavy = sorted(m for m in ('numpy', 'ml_dtypes', 'z3', 'networkx', 'modelcheck.numsim.engine',\n"
         "                           'modelcheck.racecheck.analysis', 'importlib.metadata') if m in sys.modules)\n"
         "print('HEAVY', heavy, code)\n")


def _loaded(*argv) -> str:
    out = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, cwd=ROOT)
    return next(line for line in out.stdout.splitlines() if line.startswith("HEAVY"))


def test_version_and_parse_load_no_simulator():
    out = subprocess.run([sys.executable, "-c", "import sys, modelcheck.cli; print(sorted(m for m in "
                          "('numpy', 'ml_dtypes', 'modelcheck.numsim.engine', 'importlib.metadata') "
                          "if m in sys.modules))"],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
    assert _loaded("parse", "kernels/producer_overtaking.py") == "HEAVY [] 0"


def test_facade_functions_survive_their_packages_loading():
    for name in ("synccheck", "racecheck", "replay"):
        package = importlib.import_module(f"modelcheck.{name}")
        assert callable(getattr(modelcheck, name)) and not callable(package)
    assert modelcheck.ReplayReport is importlib.import_module("modelcheck.report.replay").ReplayReport


def test_lazy_dtype_table_is_the_eager_one():
    """values.LazyTypes (ml_dtypes on first use) gives what the eager table gave."""
    import ml_dtypes
    eager = {"bfloat16": ml_dtypes.bfloat16, "float8_e4m3fn": ml_dtypes.float8_e4m3fn,
             "float8_e5m2": ml_dtypes.float8_e5m2, "float8_e4m3": ml_dtypes.float8_e4m3fn, "int32": np.int32}
    fresh = LazyTypes({"int32": np.int32}, {"bfloat16": "bfloat16", "float8_e4m3fn": "float8_e4m3fn",
                                            "float8_e5m2": "float8_e5m2", "float8_e4m3": "float8_e4m3fn"})
    assert "bfloat16" in fresh and fresh.get("nope") is None and fresh.get("nope", 1) == 1
    for name, t in eager.items():
        assert fresh.get(name) is t and fresh[name] is t and NP_DTYPE[name] is t
