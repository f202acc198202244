"""Build one small kernel of tirx-kernels with the real compiler (apache-tvm 0.27) and print it.

Skipped unless `tvm` (apache-tvm 0.27) and `tirx_kernels` import in a fresh interpreter: the
build runs in a child process, as the benchmark runs it, because apache-tvm's native library and
apache-tvm-tirx's (which the conformance tests load) cannot share one process.
Set up the environment with `bash benchmarks/corpus_setup.sh VENV` and run pytest from it.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROBE = ("import tvm, tirx_kernels; from importlib.metadata import version; "
         "assert version('apache-tvm').startswith('0.27'), version('apache-tvm')")


def _real_compiler() -> bool:
    return subprocess.run([sys.executable, "-c", PROBE], capture_output=True).returncode == 0


pytestmark = pytest.mark.skipif(not _real_compiler(), reason="apache-tvm 0.27 and tirx-kernels are not installed "
                                                             "(bash benchmarks/corpus_setup.sh)")


ENV = dict(os.environ, TIRX_PREPARE_CUDA_ARCH="sm_100a", TIRX_PREPARE_NUM_SMS="148",
           PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def _child(*argv: str) -> dict:
    proc = subprocess.run([sys.executable, "-m", *argv], env=ENV, capture_output=True, text=True, timeout=600,
                          cwd=ROOT)
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("@@CORPUS-RECORD@@")]
    assert line, proc.stderr[-2000:]
    return json.loads(line[-1][len("@@CORPUS-RECORD@@"):])


@pytest.fixture(scope="module")
def rmsnorm_cache(tmp_path_factory):
    cache = tmp_path_factory.mktemp("corpus")
    rec = _child("benchmarks.corpus.build", "rmsnorm", str(cache))
    (cache / "index.json").write_text(json.dumps({"modules": [rec]}))
    return cache, rec


def test_rmsnorm_builds_and_prints_both_generations(rmsnorm_cache):
    tmp_path, rec = rmsnorm_cache
    assert rec["status"] == "built" and rec["arch"] == "sm_100a"
    (func,) = rec["functions"]
    assert [p["kind"] for p in func["params"]] == ["buffer", "buffer", "buffer", "scalar"]
    pre = (tmp_path / func["pre"]).read_text()
    lowered = (tmp_path / func["lowered"]).read_text()
    assert "@T.prim_func" in pre and "T.cta_id(" in pre            # the 0.27 printer's pre-lowering generation
    assert "T.launch_thread(" in lowered and 'T.handle("float16", "global")' in lowered   # after lowering
    assert func["device_functions"] == ["rmsnorm_kernel"]


def test_rmsnorm_checks_clean_in_both_generations_on_the_librarys_own_inputs(rmsnorm_cache):
    """The capture runs the library's run_test on the CPU with the launch recorded; both printed generations
    then check clean with those inputs (same verdict before and after lowering)."""
    cache, rec = rmsnorm_cache
    cap = _child("benchmarks.corpus.capture", "rmsnorm", str(cache))
    got = cap["functions"]["rmsnorm"]
    assert got["scalars"] == {"batch_size": 1} and got["buffers"]["inp"] == [[128], "float16"]
    index = json.loads((cache / "index.json").read_text())
    index["modules"][0]["functions"][0]["captured"] = got
    (cache / "index.json").write_text(json.dumps(index))
    for gen in ("pre", "lowered"):
        row = _child("benchmarks.corpus.check", str(cache), "rmsnorm", "rmsnorm", gen, "check")
        assert row["parsed"] and row["fills"] == ["library"], row
        assert row["synccheck_library"]["verdict"] == row["racecheck_library"]["verdict"] == "clean", row
