"""Shared helpers for running kernels/manifest.json (used by tests/test_manifest.py)."""
from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KERNELS = ROOT / "kernels"


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
