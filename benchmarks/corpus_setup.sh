#!/usr/bin/env bash
# Set up (or update) the real-compiler environment of the production corpus (issue 14):
# apache-tvm 0.27.0.post1, tirx-kernels 0.1.2.post1 with --no-deps (its declared dependency
# kcoral is the benchmark-server client, not needed to build kernels) plus the small
# pure-Python packages its modules import, torch 2.13.0 (CPU build; 54 modules import torch at
# top level), and modelcheck itself, editable from this repository.
#
# Usage: bash benchmarks/corpus_setup.sh [VENV]     (default ~/.cache/modelcheck/corpus-venv)
# Idempotent: an existing venv is reused and pip leaves satisfied pins alone.
#
# Not installed: apache-tvm-tirx (the test extra's parser). It installs beside apache-tvm (it
# is the `tvm_tirx` package, apache-tvm is `tvm`), but the two native libraries cannot be
# loaded in one process (both register the same tvm-ffi global functions, e.g.
# `device_api.cpu`, and the second import aborts), so the corpus keeps its own venv.
# Not installed either: triton (tvm.tirx.bench imports triton.profiler; only the two
# distributed GEMMs, allgather_gemm and gemm_reduce_scatter, need it and are recorded as
# build errors with that reason).
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
VENV="${1:-$HOME/.cache/modelcheck/corpus-venv}"
PY="${PYTHON:-python3}"

TVM_VERSION=0.27.0.post1
KERNELS_VERSION=0.1.2.post1
TORCH_VERSION=2.13.0

if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV"
fi
PIP=("$VENV/bin/python" -m pip -q --disable-pip-version-check)
# apache-tvm's own dependencies are small (apache-tvm-ffi, ml_dtypes, numpy, typing_extensions)
"${PIP[@]}" install "apache-tvm==$TVM_VERSION"
# tirx-kernels declares kcoral (a benchmark-server client); the modules need only pyyaml,
# packaging and pytest (flash_attention4 and others import tvm.testing, which imports pytest)
"${PIP[@]}" install --no-deps "tirx-kernels==$KERNELS_VERSION"
"${PIP[@]}" install "packaging>=23.0" "pyyaml>=6.0" pytest
# the CPU build of torch (do not let pip pick another version: that downloads GBs)
"${PIP[@]}" install "torch==$TORCH_VERSION"
"${PIP[@]}" install -e "$REPO"
"$VENV/bin/python" - <<'PY'
from importlib.metadata import version
import tvm, tirx_kernels, torch, modelcheck  # noqa: F401
print("corpus venv ready:", ", ".join(f"{d} {version(d)}" for d in ("apache-tvm", "tirx-kernels", "torch")))
PY
