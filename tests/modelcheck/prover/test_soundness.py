"""Every mutant of a sync line is judged as Synccheck judges it at the small sizes: proved only when Synccheck
finds no sync error at any of them, refuted at exactly the smallest size where it finds one (docs/architecture.md#kernels-and-tests: mutating a
clean kernel is detected).  benchmarks/prove_mutations.py runs the same over the realistic kernels."""
from __future__ import annotations

import pytest

import modelcheck
from modelcheck import numsim
from modelcheck import prove   # the ProofReport: result and its renderings
from tests.manifest import KERNELS, load_manifest, manifest_overrides
from tests.mutation import SYNC_KINDS, mutants

SIZES = 5


@pytest.mark.parametrize("name,sym", [("ring_pipeline", "ROUNDS"), ("kda_ring_m_o", "NC"), ("kda_ring_dvec", "NC"),
                                      ("gemm_ws", "K_TILES")])
@pytest.mark.slow
def test_mutants_are_judged_as_synccheck_judges_them(name, sym, tmp_path):
    entry = load_manifest()["kernels"][name]
    inputs = (lambda c: manifest_overrides(entry, c)) if entry.get("inputs_builder") else None
    path = tmp_path / entry["file"]
    verdicts = {}
    for mname, text in mutants((KERNELS / entry["file"]).read_text()):
        path.write_text(text)
        kernel = modelcheck.load(path, **entry["constants"])
        report = prove(kernel.func, symbolic=[sym], inputs=inputs)
        broken = []
        for n in range(1, SIZES + 1):
            small = modelcheck.load(path, **{**entry["constants"], sym: n}).func
            ins = numsim.default_inputs(small, dict(inputs({c.name: c.value for c in small.constants}) if inputs
                                                    else {}))
            if {f.kind for f in modelcheck.synccheck(small, ins).findings if f.status == "error"} & SYNC_KINDS:
                broken.append(n)
        verdicts[mname] = report.verdict
        if report.verdict == "proved":
            assert not broken, f"{mname}: proved, but Synccheck fails at {sym}={broken}"
        elif report.verdict == "refuted":
            assert broken and report.counterexample["sizes"] == {sym: broken[0]}, (mname, broken, report.format())
        else:
            assert report.reasons, mname
    assert "refuted" in verdicts.values(), verdicts
