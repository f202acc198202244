"""kernels/manifest.json run as a batch plan: every verdict equals the manifest's expectation.

CI runs every Synccheck and Racecheck expectation and the prove expectations of the kernels
that prove in well under a second; the slow marker runs the prove stage of the whole manifest."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from modelcheck import cli

from .helpers import records
from .manifest_plan import expected, manifest_sweeps, plan_text

SLOW_PROVE = {"fa4_fwd", "fa4_fwd_p_overwrite", "gemm_ws", "gemm_persistent", "gemm_persistent_acc_reuse",
              "gemm_persistent_early_release", "gdn_prefill", "gdn_prefill_sinp_parity", "gdn_prefill_sinp_no_acquire",
              "kda_fwd", "kda_fwd_single_m_o", "kda_fwd_no_async_fence", "kda_fwd_dvec_early", "kda_ring_dvec"}


def _builder(rec: dict) -> str | None:
    """The inputs builder's function name of a record (None when the inputs are specs only)."""
    builder = (rec.get("inputs") or {}).get("builder")
    if isinstance(builder, dict):
        builder = builder.get("function") or builder.get("ref")
    return str(builder).rpartition(":")[2] if builder else None


def _mismatches(recs: list, expect: dict) -> list[str]:
    got = {(str(Path(r["kernel"]).resolve()), json.dumps(r["constants"], sort_keys=True), r["check"],
            _builder(r)): r for r in recs}
    bad = []
    for point, (name, e) in sorted(expect.items()):
        r = got.get(point)
        if r is None:
            bad.append(f"{name} {point[2]}: no record")
            continue
        verdict = r["checker_verdict"] if point[2] == "prove" else r["verdict"]
        kinds = {f["kind"] for f in r["findings"]}
        if verdict != e["verdict"]:
            bad.append(f"{name} {point[2]}: {verdict} ({r.get('reason')}), expected {e['verdict']}")
        elif "kinds" in e and set(e["kinds"]) - kinds:
            bad.append(f"{name} {point[2]}: missing kinds {sorted(set(e['kinds']) - kinds)}")
        elif "any_kind" in e and not kinds & set(e["any_kind"]):
            bad.append(f"{name} {point[2]}: none of {e['any_kind']} in {sorted(kinds)}")
        elif "sizes" in e and (r.get("counterexample") or {}).get("sizes") != e["sizes"]:
            bad.append(f"{name} prove: refuted at {r.get('counterexample')}, expected {e['sizes']}")
    return bad


def _run(tmp_path, sweeps, expect):
    plan = tmp_path / "manifest.toml"
    plan.write_text(plan_text(sweeps))
    code = cli.main(["batch", str(plan), "--jobs", "2", "--quiet"])
    recs = records(tmp_path / "manifest.results.jsonl")
    assert len(recs) == len({r["key"] for r in recs})
    assert not _mismatches(recs, expect), "\n".join(_mismatches(recs, expect))
    assert code == 1                      # the manifest has buggy kernels: the worst verdict is error
    assert all(r["attempts"] == 1 for r in recs)


@pytest.mark.slow
def test_manifest_as_a_plan_sync_race_and_fast_proofs(tmp_path):
    sweeps = manifest_sweeps(stages=("synccheck", "racecheck"))
    fast = [name for name, _ in manifest_sweeps(stages=("prove",)) if name not in SLOW_PROVE]
    sweeps += manifest_sweeps(names=set(fast), stages=("prove",))
    expect = expected(stages=("synccheck", "racecheck"))
    expect.update(expected(names=set(fast), stages=("prove",)))
    assert len(expect) > 280 and len(fast) >= 10
    _run(tmp_path, sweeps, expect)


@pytest.mark.slow
def test_manifest_as_a_plan_every_stage(tmp_path):
    _run(tmp_path, manifest_sweeps(), expected())


def test_a_wrong_expectation_is_caught(tmp_path):
    """The comparison itself can fail: one record with its verdict flipped is reported."""
    sweeps = manifest_sweeps(names={"ring_missing_guard"}, stages=("synccheck",))
    plan = tmp_path / "m.toml"
    plan.write_text(plan_text(sweeps))
    cli.main(["batch", str(plan), "--jobs", "1", "--quiet"])
    recs = records(tmp_path / "m.results.jsonl")
    expect = expected(names={"ring_missing_guard"}, stages=("synccheck",))
    assert _mismatches(recs, expect) == []
    recs[0]["verdict"] = "clean"
    assert _mismatches(recs, expect) == ["ring_missing_guard sync: clean (None), expected error"]
