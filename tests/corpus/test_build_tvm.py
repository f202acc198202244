"""Build a few small kernels of tirx-kernels, of different families, with the real compiler (apache-tvm 0.27),
print both generations, capture the library's own inputs and check them: the CI subset of the production
corpus (the whole library is benchmarks/production_corpus.py).

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


# module -> (Synccheck, Racecheck) verdict and kinds on the library's own inputs, the same in both generations.
# fp16_bf16_gemm's error is a true bug against the PTX rule (benchmarks/results/production_corpus.md: its
# epilogue warps address TMEM lanes outside their quarter).
FAMILIES = {
    "rmsnorm": ("clean", set()),                                        # a norm: SIMT, shared-memory reduction
    "merge_state": ("clean", set()),                                    # attention state merge
    "mxfp8_quantize": ("clean", set()),                                 # block-scaled quantization
    "fp16_bf16_gemm": ("error", {"tmem_access_invalid_target"}),        # TMA ring + tcgen05 + TMEM epilogue
}


@pytest.fixture(scope="module", params=sorted(FAMILIES))
def captured_cache(request, tmp_path_factory):
    module = request.param
    cache = tmp_path_factory.mktemp(module)
    rec = _child("benchmarks.corpus.build", module, str(cache))
    assert rec["status"] == "built", rec
    (cache / "index.json").write_text(json.dumps({"modules": [rec]}))     # the capture reads the build record
    cap = _child("benchmarks.corpus.capture", module, str(cache))
    for func in rec["functions"]:
        func["captured"] = cap["functions"][func["function"]]
    (cache / "index.json").write_text(json.dumps({"modules": [rec]}))
    return module, cache, rec


def test_rmsnorm_captures_the_librarys_own_call(rmsnorm_cache):
    cache, rec = rmsnorm_cache
    got = _child("benchmarks.corpus.capture", "rmsnorm", str(cache))["functions"]["rmsnorm"]
    assert got["scalars"] == {"batch_size": 1} and got["buffers"]["inp"] == [[128], "float16"]


def test_each_family_checks_the_same_in_both_generations_on_the_librarys_own_inputs(captured_cache):
    """The capture runs the library's run_test on the CPU with the launch recorded; both printed generations
    then get the recorded verdicts with those inputs (the same before and after lowering)."""
    module, cache, rec = captured_cache
    verdict, kinds = FAMILIES[module]
    for func in rec["functions"]:
        for gen in ("pre", "lowered"):
            row = _child("benchmarks.corpus.check", str(cache), module, func["function"], gen, "check")
            assert row["parsed"] and row["fills"] == ["library"], row
            for checker in ("synccheck_library", "racecheck_library"):
                assert row[checker]["verdict"] == verdict and kinds <= set(row[checker]["kinds"]), (gen, row)
