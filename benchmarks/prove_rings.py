"""Prover time per ring family (target: <= 2 s each, issue #7 / docs/architecture.md#performance).

Proves the two clean ring kernels (PipelineState cursors, closed-form parities) for
every STAGES in 1..6 with ROUNDS symbolic, and refutes the five buggy variants of the
issue, recording the smallest failing size each refutation reports (confirmed by
Synccheck on the specialized kernel).  Per kernel: wall and CPU time of the whole
`prove` call (parse excluded), solver seconds per barrier family.

Usage: python benchmarks/prove_rings.py [--repeat N]
Writes benchmarks/results/prove_rings.json.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks._common import record  # noqa: E402

PROOFS = [("ring_pipeline.py", d) for d in range(1, 7)] + [("ring_arith.py", d) for d in range(1, 7)] + \
         [("producer_overtaking_fixed.py", None), ("ring_guarded.py", None), ("ring_short_arrival_fixed.py", None)]
REFUTATIONS = [("producer_overtaking.py", 2), ("ring_producer_phase0.py", 1), ("ring_consumer_parity.py", 1),
               ("ring_short_arrival.py", 1), ("ring_missing_guard.py", 2)]


def run(kernel: str, stages, repeat: int) -> dict:
    import modelcheck
    from modelcheck import prove   # the ProofReport: result and its renderings
    consts = {"STAGES": stages} if stages is not None else {}
    func = modelcheck.load(ROOT / "kernels" / kernel, **consts).func
    walls, cpus, report = [], [], None
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        report = prove(func, symbolic=["ROUNDS"])
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    families: dict = {}
    for p in report.properties:
        if p.family.startswith("bar"):
            continue
        families[p.family] = families.get(p.family, 0.0) + p.seconds
    row = {"kernel": kernel, "stages": stages, "verdict": report.verdict, "wall_s": statistics.median(walls),
           "cpu_s": statistics.median(cpus), "solver_s_per_family": {k: round(v, 4) for k, v in families.items()}}
    if report.verdict == "refuted":
        row["smallest_failing"] = report.counterexample["sizes"]
        row["confirmed_by"] = report.counterexample.get("confirmed_by", {}).get("kind")
    return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rows = []
    print(f"{'kernel':<30} {'D':>2} {'verdict':<9} {'wall (s)':>8} {'cpu (s)':>8} {'max family solver (s)':>22}  "
          f"smallest failing")
    for kernel, stages in PROOFS + [(k, None) for k, _ in REFUTATIONS]:
        row = run(kernel, stages, args.repeat)
        rows.append(row)
        worst = max(row["solver_s_per_family"].values(), default=0.0)
        print(f"{kernel:<30} {stages if stages else '':>2} {row['verdict']:<9} {row['wall_s']:>8.3f} "
              f"{row['cpu_s']:>8.3f} {worst:>22.3f}  {row.get('smallest_failing', '')}")
    expected = dict(REFUTATIONS)
    ok_proofs = all(r["verdict"] == "proved" for r in rows[:len(PROOFS)])
    ok_refute = all(r["verdict"] == "refuted" and r["smallest_failing"] == {"ROUNDS": expected[r["kernel"]]}
                    for r in rows[len(PROOFS):])
    per_family_ok = all(r["cpu_s"] / max(1, len(r["solver_s_per_family"])) <= 2.0 for r in rows[:len(PROOFS)])
    print(f"all proofs: {'yes' if ok_proofs else 'NO'}; refutations at the expected smallest sizes: "
          f"{'yes' if ok_refute else 'NO'}; <= 2 s CPU per ring family on every proof: "
          f"{'met' if per_family_ok else 'MISSED'}")
    print("wrote", record("prove_rings", {"rows": rows, "target_seconds_per_family": 2.0,
                                          "all_proved": ok_proofs, "refutations_as_expected": ok_refute,
                                          "per_family_target_met": per_family_ok,
                                          "note": "cpu_s covers the whole prove call (skeleton, the happens-before "
                                                  "certificate, refutation with Synccheck confirmation); parse "
                                                  "excluded"}))


if __name__ == "__main__":
    main()
