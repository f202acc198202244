"""Shared helpers for running kernels/manifest.json (used by tests/test_manifest.py)."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

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
