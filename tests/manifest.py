"""Shared helpers for running kernels/manifest.json (used by tests/test_manifest.py)."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np

import ir
from modelcheck import numsim

ROOT = Path(__file__).resolve().parent.parent
KERNELS = ROOT / "kernels"
INPUT_BUILDERS = KERNELS / "inputs"


def load_manifest() -> dict:
    return json.loads((KERNELS / "manifest.json").read_text())


def entries() -> list[tuple[str, dict]]:
    return sorted(load_manifest()["kernels"].items())


def stage_cases(stage: str) -> list[tuple[str, dict, dict]]:
    """(kernel name, entry, expectation) for every kernel that states an expectation for `stage`."""
    out = []
    for name, entry in entries():
        expect = entry["expect"].get(stage)
        if expect is not None:
            out.append((name, entry, expect))
    return out


def inputs_builder(entry: dict):
    """The entry's "inputs_builder" ("module:function" in kernels/inputs/<module>.py) as a callable, or None."""
    spec = entry.get("inputs_builder")
    if not spec:
        return None
    module, _, function = spec.partition(":")
    path = INPUT_BUILDERS / f"{module}.py"
    loaded = importlib.util.spec_from_file_location(f"_kernel_inputs_{module}", path)
    mod = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(mod)
    return getattr(mod, function)


def manifest_overrides(entry: dict, constants: dict | None = None) -> dict:
    """The entry's inputs at given constants: its inputs_builder's dict, then the input specs
    (zeros|ones|random[:seed]|FILE.npy) on top; buffers neither lists are left to the caller."""
    builder = inputs_builder(entry)
    overrides = dict(builder(dict(constants or {}))) if builder is not None else {}
    for param, spec in entry["inputs"].items():
        overrides[param] = np.load(KERNELS / spec) if spec.endswith(".npy") else spec
    return overrides


def manifest_inputs(func: "ir.PrimFunc", entry: dict, constants: dict | None = None) -> dict:
    """The manifest's inputs for one kernel, every other static-shape buffer zero-filled."""
    return numsim.default_inputs(func, manifest_overrides(entry, constants))
