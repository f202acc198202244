"""Prover models of manifest kernels, for the prover's tests."""
from __future__ import annotations

import modelcheck
from modelcheck.prover.model import Model
from modelcheck.prover.skeleton import extract
from modelcheck.prover.specialize import specializer, tma_bytes
from tests.manifest import KERNELS, load_manifest, manifest_overrides


def model_at(path, sym: str, **consts):
    """(kernel function, prover Model with `sym` symbolic from 1) of a kernel file without TMA."""
    func = modelcheck.load(path, **consts).func
    values = {c.name: c.value for c in func.constants} | {sym: 1}
    return func, Model(extract(func, (sym,), values), {sym: (1, None)}, {})


def model_of(name: str, sym: str, **consts):
    """(kernel function, prover Model with `sym` symbolic from 1, specialize(func, sizes) -> (func, inputs))."""
    entry = load_manifest()["kernels"][name]
    func = modelcheck.load(KERNELS / entry["file"], **{**entry["constants"], **consts}).func
    inputs = (lambda c: manifest_overrides(entry, c)) if entry.get("inputs_builder") else None
    values = {c.name: c.value for c in func.constants} | {sym: 1}
    ranges = {sym: (1, None)}
    skel = extract(func, (sym,), values)
    return func, Model(skel, ranges, tma_bytes(func, skel, ranges, inputs)), specializer(inputs)
